// A small state label (OK, Failing, added, HTTP 200…) in colours that keep AA contrast in both schemes: Mantine's
// light badges put shade-9 text on shade-1 backgrounds (green: 3.8:1), under the 4.5:1 small text needs.
import { Badge, useComputedColorScheme, type BadgeProps } from "@mantine/core";
import type { ReactNode, Ref } from "react";

export type Tone = "ok" | "fail" | "neutral" | "info" | "warn";

const LIGHT: Record<Tone, [string, string]> = {
  ok: ["#d3f9d8", "#1b4d24"],
  fail: ["#c92a2a", "#ffffff"],
  neutral: ["#e9ecef", "#343a40"],
  info: ["#d0ebff", "#1c4f80"],
  warn: ["#ffe8cc", "#7a3d00"],
};
const DARK: Record<Tone, [string, string]> = {
  ok: ["#1f3a2a", "#b2f2bb"],
  fail: ["#c92a2a", "#ffffff"],
  neutral: ["#373a40", "#dee2e6"],
  info: ["#1c3a57", "#a5d8ff"],
  warn: ["#4a3418", "#ffd8a8"],
};

type Extra = { tabIndex?: number; ref?: Ref<HTMLDivElement> } & { [data: `data-${string}`]: string };

/** Forwards `ref` (React 19: a plain prop) and the rest, so a Tooltip can wrap it. */
export function StateBadge({ tone, children, ...props }: { tone: Tone; children: ReactNode } & Omit<BadgeProps, "color" | "variant"> & Extra) {
  const dark = useComputedColorScheme("light") === "dark";
  const [bg, fg] = (dark ? DARK : LIGHT)[tone];
  return (
    <Badge
      tt="none"
      variant="filled"
      color={bg}
      c={fg}
      styles={{ root: { flexShrink: 0, maxWidth: "none" }, label: { overflow: "visible" } }}
      {...props}
    >
      {children}
    </Badge>
  );
}
