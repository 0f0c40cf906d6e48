// Header control: light / dark / system, stored for the user.
import { SegmentedControl, VisuallyHidden } from "@mantine/core";
import { useTheme, type UiTheme } from "./use-theme-setting";

export const THEME_OPTIONS: { value: UiTheme; label: string }[] = [
  { value: "light", label: "Light" },
  { value: "dark", label: "Dark" },
  { value: "system", label: "System" },
];

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
