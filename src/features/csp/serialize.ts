// `_serialize` (supplement §13.4): the policy value for one delivery, without header name or <meta>.
import type { Directive } from "./contract";
import { SERIALIZE_SOURCES } from "./shared-rules";

export type SerializeSource = (typeof SERIALIZE_SOURCES)[number];

/** Directives a delivery ignores, hence dropped from its text. */
const DROPPED: Record<SerializeSource, ReadonlySet<string>> = {
  enforcingHeader: new Set(),
  reportOnlyHeader: new Set(["sandbox"]),
  meta: new Set(["sandbox", "frame-ancestors", "report-uri", "report-to"]),
};

/** Stored order, joined by "; ", each `name` or `name v1 v2 …`. */
export function serializePolicy(directives: Directive[], source: SerializeSource): string {
  return directives
    .filter((d) => !DROPPED[source].has(d.name))
    .map((d) => (d.value && d.value.length > 0 ? `${d.name} ${d.value.join(" ")}` : d.name))
    .join("; ");
}
