// The settings slice's API calls: the user's settings (GET/POST /api/user/settings), read for the theme.
// The theme is remembered per user (settings key `common.uiTheme`: light | dark | system) and, for the first
// paint of the next visit, in localStorage (index.html's inline script reads it). The stored setting wins when
// the user signs in on another browser.
import { useMantineColorScheme, type MantineColorScheme } from "@mantine/core";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { api, call } from "../../api/client";
import { settings as settingRules } from "../../api/rules.gen";
import type { Settings } from "../../api/types";

export type UiTheme = (typeof settingRules.UI_THEMES)[number];
export const SETTINGS_KEY = ["settings"] as const;

const toScheme = (t: UiTheme): MantineColorScheme => (t === "system" ? "auto" : t);
const fromScheme = (s: MantineColorScheme): UiTheme => (s === "auto" ? "system" : s);

export function useSettings() {
  return useQuery<Settings>({ queryKey: SETTINGS_KEY, queryFn: () => call(api.GET("/api/user/settings")) });
}

/** Applies the user's stored theme once the settings arrive. */
export function useThemeSync() {
  const settings = useSettings();
  const { colorScheme, setColorScheme } = useMantineColorScheme();
  const stored = settings.data?.["common.uiTheme"];
  useEffect(() => {
    if (stored && toScheme(stored) !== colorScheme) setColorScheme(toScheme(stored));
    // Only when the stored value changes; local changes go through useSetTheme.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [stored]);
}

/** The current theme and a setter that applies it at once and stores it for the user. */
export function useTheme(): [UiTheme, (t: UiTheme) => void] {
  const { colorScheme, setColorScheme } = useMantineColorScheme();
  const qc = useQueryClient();
  const save = useMutation({
    mutationFn: (t: UiTheme) => call(api.POST("/api/user/settings", { body: { "common.uiTheme": t } })),
    onSuccess: (s) => qc.setQueryData(SETTINGS_KEY, s),
  });
  return [
    fromScheme(colorScheme),
    (t) => {
      setColorScheme(toScheme(t));
      save.mutate(t);
    },
  ];
}
