// The evaluator's findings for what the editor shows, kept current as the policy is edited: the draft is sent as
// `{serialized}` 400 ms after the last change; an unchanged saved policy as `{policyId}`. The previous findings stay
// on screen while the next ones load.
import { useDebouncedValue } from "@mantine/hooks";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { cspApi, CSP_KEY } from "./csp-api";

export function useEvaluation(serialized: string, saved: { id: string; updatedAt: string | number } | null) {
  const [debounced] = useDebouncedValue(serialized, 400);
  const body = saved ? { policyId: saved.id } : { serialized: debounced };
  return useQuery({
    queryKey: [CSP_KEY, "evaluate", saved ? `id:${saved.id}:${saved.updatedAt}` : `text:${debounced}`],
    queryFn: () => cspApi.evaluate(body),
    enabled: saved !== null || debounced.trim() !== "",
    placeholderData: keepPreviousData,
    staleTime: 60_000,
    retry: false,
  });
}
