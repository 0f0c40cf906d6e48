// CSP work that can be long (issue 29): `_evaluate` of a large text or stored policy runs on the work pool
// (platform/work) under the caller's share; small ones run inline (a pool round trip would cost more than they do).
// The worker entry (src/work-tasks.ts) lists `cspTasks`.
import { invalid } from "../../platform/http/errors";
import { implement, taskRef, type TaskImpl } from "../../platform/work/task";
import { evaluatePolicy, type EvaluatedDirective, type Finding } from "./evaluate";
import { splitDirectives, splitPolicies } from "./import";

/** §27: at most this many findings per policy, most severe first. */
export const MAX_FINDINGS = 100;
/** §27: a `serialized` text of at most 64 KiB (UTF-8 bytes); larger → 400. */
export const MAX_EVALUATE_BYTES = 65_536;
/** Inputs up to this size (characters of text or of directive values) are evaluated inline. */
export const INLINE_EVALUATE_CHARS = 4096;

export type EvaluateInput = { text: string } | { directives: EvaluatedDirective[] };

/**
 * Findings of a `_evaluate` input. A text is read as browsers read it (§13.2): policies split at `,`, every token,
 * directives with unreadable characters ignored. Only the first policy is evaluated today; §27's `policyIndex`
 * (findings per policy of a comma-joined text) would evaluate each of `policies` here with its own cap.
 */
export function evaluateInput(input: EvaluateInput): Finding[] {
  if ("directives" in input) return evaluatePolicy(input.directives).slice(0, MAX_FINDINGS);
  const policies = splitPolicies(input.text);
  const directives = policies.length > 0 ? splitDirectives(policies[0]!) : [];
  if (directives.length === 0) throw invalid("serialized: no directive found in the policy");
  return evaluatePolicy(directives).slice(0, MAX_FINDINGS);
}

/** How much an input holds (what decides inline or pool). */
export function evaluateSize(input: EvaluateInput): number {
  if ("text" in input) return input.text.length;
  let n = 0;
  for (const d of input.directives) {
    n += d.name.length;
    for (const v of d.value ?? []) n += v.length + 1;
  }
  return n;
}

export const evaluateTask = taskRef<EvaluateInput, Finding[]>("csp.evaluate");

export const cspTasks: TaskImpl[] = [implement(evaluateTask, evaluateInput)];
