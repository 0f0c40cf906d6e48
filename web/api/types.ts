// Wire types, taken from the generated schema (never written by hand) so they follow the contract.
import type { components, paths } from "./schema.gen";

type Json<R> = R extends { content: { "application/json": infer T } } ? T : never;
export type Ok<Op> = Op extends { responses: infer R } ? Json<R[200 & keyof R]> | Json<R[201 & keyof R]> : never;

export type User = Ok<paths["/api/users/self"]["get"]>;
export type Status = Ok<paths["/api/status"]["get"]>;
export type Tag = Ok<paths["/api/user/tags/{tag_id}"]["get"]>;
export type Secret = Ok<paths["/api/user/secrets/{secret_id}"]["get"]>;
export type Script = Ok<paths["/api/user/scripts/{script_id}"]["get"]>;
export type ScriptListItem = Ok<paths["/api/user/scripts"]["get"]>["items"][number];
export type ScriptType = Script["scriptType"];
export type ApiKey = Ok<paths["/api/user/api_keys"]["get"]>[number];
export type ApiKeyCreated = Ok<paths["/api/user/api_keys"]["post"]>;
export type NotificationDestination = Ok<paths["/api/user/notification_email"]["put"]>;
export type Settings = Ok<paths["/api/user/settings"]["get"]>;
export type SearchResults = Ok<paths["/api/search"]["post"]>;
export type SearchHit = SearchResults["items"][number];
export type SearchType = SearchHit["type"];

/** Timestamps are integer unix seconds (supplement §1), as the document types them. */
export type Timestamp = User["createdAt"];

/** The common list query (supplement §1), as the list endpoints accept it (the tags list's, the plainest). */
export type ListQuery = NonNullable<paths["/api/user/tags"]["get"]["parameters"]["query"]>;

// Certificates (supplement §12), content security policies (§13), user data (§19).
export type PrivateKey = Ok<paths["/api/certificates/private_keys/{key_id}"]["get"]>;
export type TemplateGetResponse = Ok<paths["/api/certificates/templates/{template_id}"]["get"]>;
export type CertificateTemplate = TemplateGetResponse["template"];
export type TemplateAttributes = CertificateTemplate["attributes"];
export type KeyAlgorithm = TemplateAttributes["keyAlgorithm"];
export type KeyType = KeyAlgorithm["keyType"];
export type SignatureAlgorithm = TemplateAttributes["signatureAlgorithm"];
export type KeyUsage = NonNullable<TemplateAttributes["keyUsage"]>[number];
export type ExtendedKeyUsage = NonNullable<TemplateAttributes["extendedKeyUsage"]>[number];
export type ExportedFile = Ok<paths["/api/certificates/templates/{template_id}/_generate"]["post"]>;
export type PolicyGetResponse = Ok<paths["/api/web_security/csp/{policy_id}"]["get"]>;
export type Policy = PolicyGetResponse["policy"];
export type PolicyCreated = Ok<paths["/api/web_security/csp"]["post"]>;
export type Directive = Policy["directives"][number];
export type DirectiveName = Directive["name"];
export type Finding = Ok<paths["/api/web_security/csp/_evaluate"]["post"]>["findings"][number];
/** A policy's content in create/update requests: directives, serialized text, or a remote URL (§13.3). */
export type PolicyContent = components["schemas"]["CspContent"];
export type ImportPreview = Ok<paths["/api/user/data/_import_preview"]["post"]>;
export type ImportResult = Ok<paths["/api/user/data/_import"]["post"]>;
/** An import's `data`: the export file as a JSON object or its text. */
export type ImportData = paths["/api/user/data/_import"]["post"]["requestBody"]["content"]["application/json"]["data"];

// Trackers (supplement §14–§17).
type Body<Op> = Op extends { requestBody?: { content: { "application/json": infer B } } } ? B : never;
type ApiTrackers = "/api/web_scraping/api_trackers";
type PageTrackers = "/api/web_scraping/page_trackers";
export type ApiTracker = Ok<paths[`${ApiTrackers}/{tracker_id}`]["get"]>;
export type PageTracker = Ok<paths[`${PageTrackers}/{tracker_id}`]["get"]>;
export type ApiTrackerRequest = ApiTracker["target"]["requests"][number];
export type ApiTrackerCreateParams = Body<paths[ApiTrackers]["post"]>;
export type PageTrackerCreateParams = Body<paths[PageTrackers]["post"]>;
/** One request as a create/update/_test body takes it. */
export type ApiTrackerRequestParam = Extract<ApiTrackerCreateParams["target"], { requests: unknown }>["requests"][number];
export type ApiTrackerTestParams = Body<paths[`${ApiTrackers}/_test`]["post"]>;
export type ApiTrackerDebugParams = Body<paths[`${ApiTrackers}/_debug`]["post"]>;
export type PageTrackerDebugParams = Body<paths[`${PageTrackers}/_debug`]["post"]>;
export type TrackerRevision = Ok<paths[`${ApiTrackers}/{tracker_id}/_history`]["post"]>[number];
export type ApiTrackerLog = Ok<paths[`${ApiTrackers}/{tracker_id}/_logs`]["get"]>[number];
export type PageTrackerLog = Ok<paths[`${PageTrackers}/{tracker_id}/_logs`]["get"]>[number];
export type TrackerLog = ApiTrackerLog | PageTrackerLog;
export type TrackerLogsSummary = Record<string, TrackerLog[]>;
export type ApiTrackerTestResult = Ok<paths[`${ApiTrackers}/_test`]["post"]>;
export type ApiTrackerDebugTrace = Ok<paths[`${ApiTrackers}/_debug`]["post"]>;
export type PageTrackerDebugTrace = Ok<paths[`${PageTrackers}/_debug`]["post"]>;
export type ParsedSchedule = Ok<paths["/api/scheduler/parse_schedule"]["post"]>;
