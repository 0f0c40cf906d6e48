// Header control: light / dark / system, stored for the user.
import { SegmentedControl, VisuallyHidden } from "@mantine/core";
import { settings as settingRules } from "../../api/rules.gen";
import { useTheme, type UiTheme } from "./settings-api";

const LABELS: Record<UiTheme, string> = { light: "Light", dark: "Dark", system: "System" };
export const THEME_OPTIONS: { value: UiTheme; label: string }[] = settingRules.UI_THEMES.map((value) => ({ value, label: LABELS[value] }));

export function ThemeToggle() {
  const [theme, setTheme] = useTheme();
  return (
    <>
      <VisuallyHidden id="theme-toggle-label">Theme</VisuallyHidden>
      <SegmentedControl
        size="xs"
        visibleFrom="sm"
        aria-labelledby="theme-toggle-label"
        value={theme}
        onChange={(v) => setTheme(v as UiTheme)}
        data={THEME_OPTIONS}
      />
    </>
  );
}
