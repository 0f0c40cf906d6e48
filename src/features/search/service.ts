// Search across the caller's resources (supplement §20): every entity type, by name (case-insensitive substring),
// id (equal to the query) and content (script source, responder path, tracker URLs). The search feature owns no
// table: each owning feature's service answers for its type (its store runs the shared matching of
// platform/db/search.ts over the user's rows only), and the per-type pages are merged here. Each type returns its
// first `limit` hits in rank order, so the merge is exact; `total` is the sum of the types' counts. Names and ids
// are all a hit shows: never secret values or key material.
import { invalid } from "../../platform/http/errors";
import { charLength } from "../../platform/http/validate";
import { compareHits, searchText, type Matched, type SearchHit, type SearchText } from "../../platform/db/search";
import type { Runtime } from "../../platform/runtime";
import type { CertificatesService } from "../certificates/service";
import type { CspService } from "../csp/service";
import type { RespondersService } from "../responders/service";
import type { ScriptsService } from "../scripts/service";
import type { SecretsService } from "../secrets/service";
import type { TagsService } from "../tags/service";
import type { TrackersService } from "../trackers/service";

export const SEARCH_TYPES = [
  "tag",
  "secret",
  "script",
  "responder",
  "certificateTemplate",
  "privateKey",
  "contentSecurityPolicy",
  "pageTracker",
  "apiTracker",
] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];

export const MAX_QUERY_CHARS = 200;
export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

export interface SearchItem {
  type: SearchType;
  id: string;
  name: string;
  matched: Matched;
  updatedAt: number;
}

export interface SearchDeps {
  tags: TagsService;
  secrets: SecretsService;
  scripts: ScriptsService;
  responders: RespondersService;
  certificates: CertificatesService;
  csp: CspService;
  trackers: TrackersService;
}

type Searcher = (userId: string, q: SearchText, limit: number) => Promise<{ total: number; hits: SearchHit[] }>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export class SearchService {
  private readonly searchers: Record<SearchType, Searcher>;

  constructor(
    private readonly rt: Runtime,
    deps: SearchDeps,
  ) {
    this.searchers = {
      tag: (u, q, l) => deps.tags.search(u, q, l),
      secret: (u, q, l) => deps.secrets.search(u, q, l),
      script: (u, q, l) => deps.scripts.search(u, q, l),
      responder: (u, q, l) => deps.responders.search(u, q, l),
      certificateTemplate: (u, q, l) => deps.certificates.templates.search(u, q, l),
      privateKey: (u, q, l) => deps.certificates.keys.search(u, q, l),
      contentSecurityPolicy: (u, q, l) => deps.csp.search(u, q, l),
      pageTracker: (u, q, l) => deps.trackers.page.search(u, q, l),
      apiTracker: (u, q, l) => deps.trackers.api.search(u, q, l),
    };
  }

  /** `{query, types?, limit?}` → `{items, total}`. */
  async search(userId: string, body: unknown): Promise<{ items: SearchItem[]; total: number }> {
    if (!isObject(body)) throw invalid("body: must be a JSON object {query, types?, limit?}");
    if (typeof body.query !== "string") throw invalid("query: must be a string");
    const text = body.query.trim();
    if (charLength(text) > MAX_QUERY_CHARS) throw invalid(`query: must be at most ${MAX_QUERY_CHARS} characters`);
    const types = parseTypes(body.types);
    const limit = parseLimit(body.limit);
    if (text === "") return { items: [], total: 0 };
    const q = searchText(text);
    let total = 0;
    const items: (SearchItem & SearchHit)[] = [];
    for (const type of types) {
      const found = await this.searchers[type](userId, q, limit);
      total += found.total;
      for (const h of found.hits) items.push({ type, id: h.id, name: h.name, matched: h.matched, updatedAt: h.updatedAt });
    }
    items.sort(compareHits);
    return { items: items.slice(0, limit), total };
  }
}

/** `types`: absent, null or [] = every type; unknown → 400; repeats collapse. */
function parseTypes(raw: unknown): readonly SearchType[] {
  if (raw === undefined || raw === null) return SEARCH_TYPES;
  if (!Array.isArray(raw)) throw invalid(`types: must be an array of ${SEARCH_TYPES.join(", ")}`);
  raw.forEach((t, i) => {
    if (typeof t !== "string" || !(SEARCH_TYPES as readonly string[]).includes(t)) throw invalid(`types[${i}]: must be one of ${SEARCH_TYPES.join(", ")}`);
  });
  if (raw.length === 0) return SEARCH_TYPES;
  const wanted = new Set(raw as string[]);
  return SEARCH_TYPES.filter((t) => wanted.has(t));
}

/** `limit`: default 20, above 100 → 100, below 1 or not an integer → 400. */
function parseLimit(raw: unknown): number {
  if (raw === undefined || raw === null) return DEFAULT_LIMIT;
  if (typeof raw !== "number" || !Number.isInteger(raw)) throw invalid("limit: must be an integer");
  if (raw < 1) throw invalid("limit: must be at least 1");
  return Math.min(raw, MAX_LIMIT);
}
