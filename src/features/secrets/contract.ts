// The wire shapes of secrets (supplement §7) and the secrets access selector (§7.1) responders and trackers share:
// the one declaration of each (TypeBox: the OpenAPI document and the web types come from it); the TypeScript types
// are their `Static`. Other features import SecretsSelector and SecretsSelectorParam from here.
import { Named, Opt, StringEnum, T, UnixTime, Uuid, type Static } from "../../platform/http/contract";
import { TaggedMembers, TagIdsParam, type Untagged } from "../tags/contract";
import { MAX_SECRET_VALUE_BYTES, SECRET_NAME_RE } from "./shared-rules";

const NAME_PATTERN = SECRET_NAME_RE.source;

export const UserSecret = Named(
  "UserSecret",
  T.Object({
    id: Uuid(),
    name: T.String({ pattern: NAME_PATTERN, description: "case-sensitive, immutable" }),
    ...TaggedMembers,
    createdAt: UnixTime(),
    updatedAt: UnixTime(),
  }),
);
/** `UserSecret`: metadata and tags, never a value. */
export type UserSecret = Static<typeof UserSecret>;
/** `UserSecret` without its tags (what the store reads; the tags service adds them). */
export type SecretMeta = Untagged<UserSecret>;

/** The selector as stored and echoed (always present in responses). */
export const SecretsSelector = Named(
  "SecretsSelector",
  T.Union([StringEnum(["none", "all"]), T.Object({ selected: T.Array(Uuid(), { minItems: 1 }) }, { required: ["selected"] })], {
    description: 'which secrets scripts see: "none", "all" (also secrets created later) or {"selected": [secret ids]}',
  }),
);
/** A secrets access selector in its stored / echoed form (supplement §7.1). */
export type SecretsSelector = Static<typeof SecretsSelector>;

/** The selector in requests: the stored forms, secret names in `selected`, and the `{type}` forms (supplement §7.1). */
export const SecretsSelectorParam = Named(
  "SecretsSelectorParam",
  T.Union(
    [
      StringEnum(["none", "all"]),
      T.Object({ selected: T.Array(T.String({ description: "a secret id or name" })) }),
      T.Object({ type: StringEnum(["none", "all"]) }),
      T.Object({ type: StringEnum(["selected"]), secrets: T.Array(T.String({ description: "a secret id or name" })) }),
    ],
    { description: 'default "none"; every listed secret must be one of yours (400 otherwise); an empty list means "none"' },
  ),
);

const Value = T.String({ minLength: 1, description: `1..${MAX_SECRET_VALUE_BYTES.toLocaleString("en-US")} UTF-8 bytes; never returned` });
export const SecretCreateParams = Named(
  "SecretCreateParams",
  T.Object({ name: T.String({ pattern: NAME_PATTERN, description: "case-sensitive, unique per user" }), value: Value, tagIds: TagIdsParam }),
);
export const SecretUpdateParams = Named(
  "SecretUpdateParams",
  T.Object(
    { value: Opt(Value), tagIds: TagIdsParam, name: Opt(T.String({ description: "immutable: when sent it must equal the stored name" })) },
    { description: "value and/or tagIds", minProperties: 1 },
  ),
);
