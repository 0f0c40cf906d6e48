// CSP work that can be long (issue 29): `_evaluate` of a large text or stored policy runs on the work pool
// (platform/work) under the caller's share; small ones run inline (a pool round trip would cost more than they do).
// The worker entry (src/work-tasks.ts) lists `cspTasks`.
import { invalid } from "../../platform/core/errors";
import { implement, taskRef, type TaskImpl } from "../../platform/work/task";
import { MAX_FINDINGS, MAX_POLICIES, SEVERITIES, type Evaluation } from "./contract";
import { evaluatePolicy, type EvaluatedDirective } from "./evaluate";
import { splitDirectives, splitPolicies } from "./import";

/** §27: a `serialized` text of at most 64 KiB (UTF-8 bytes); larger → 400. */
export const MAX_EVALUATE_BYTES = 65_536;
/** Inputs up to this size (characters of text or of directive values) are evaluated inline. */
export const INLINE_EVALUATE_CHARS = 4096;

export type EvaluateInput = { text: string } | { directives: EvaluatedDirective[] };

const RANK = new Map<string, number>(SEVERITIES.map((s, i) => [s, i]));

/**
 * Findings of a `_evaluate` input. A text is read as browsers read it (§13.2): policies split at `,` (browsers
 * enforce every one of them), every token, directives with unreadable characters ignored; a policy without any
 * directive (`, ;`) is no policy. Each policy is evaluated on its own, with its own cap of MAX_FINDINGS (§27).
 */
export function evaluateInput(input: EvaluateInput): Evaluation {
  if ("directives" in input)
    return {
      findings: evaluatePolicy(input.directives)
        .slice(0, MAX_FINDINGS)
        .map((f) => ({ ...f, policyIndex: 0 })),
      policyCount: 1,
    };
  const policies = splitPolicies(input.text)
    .map(splitDirectives)
    .filter((ds) => ds.length > 0);
  if (policies.length === 0) throw invalid("serialized: no directive found in the policy");
  if (policies.length > MAX_POLICIES)
    throw invalid(`serialized: at most ${MAX_POLICIES} policies (separated by ','); the text holds ${policies.length}`);
  const findings = policies.flatMap((directives, policyIndex) =>
    evaluatePolicy(directives)
      .slice(0, MAX_FINDINGS)
      .map((f) => ({ ...f, policyIndex })),
  );
  // Stable: policy order (then check order) kept within a severity.
  findings.sort((a, b) => RANK.get(a.severity)! - RANK.get(b.severity)!);
  return { findings, policyCount: policies.length };
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

export const evaluateTask = taskRef<EvaluateInput, Evaluation>("csp.evaluate");

export const cspTasks: TaskImpl[] = [implement(evaluateTask, evaluateInput)];
