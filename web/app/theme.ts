// Mantine theme, tuned for WCAG AA contrast (axe-core finds no serious violation in either scheme):
// - filled colours use shade 8 in both schemes (shade 6 blue on white text is 4.32:1, shade 5 is 2.99:1);
// - "dimmed" text is gray.7 on light and dark.1 on dark (Mantine's defaults are 3.3:1 and 4.0:1);
// - field error text is red.9 on light and red.4 on dark (Mantine's red.6 is 3.3:1 on white; red.8 is 4.28:1 on a filled
//   fieldset's gray.0);
// - links are always underlined, so links inside text are told apart by more than colour.
import { Alert, Anchor, createTheme, Notification, localStorageColorSchemeManager, type CSSVariablesResolver } from "@mantine/core";

export const theme = createTheme({
  primaryColor: "blue",
  primaryShade: { light: 8, dark: 8 },
  defaultRadius: "sm",
  // The system font stack: nothing is fetched (no web fonts).
  fontFamily: "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif",
  fontFamilyMonospace: "ui-monospace, SFMono-Regular, Menlo, Consolas, 'Liberation Mono', monospace",
  components: {
    Anchor: Anchor.extend({ defaultProps: { underline: "always" } }),
    // Alert titles in the body text colour: the light variant's coloured titles fail contrast (yellow: 2.7:1).
    Alert: Alert.extend({ styles: { title: { color: "var(--mantine-color-text)" } } }),
    // A toast's close button has no accessible name otherwise (axe button-name, critical).
    Notification: Notification.extend({ defaultProps: { closeButtonProps: { "aria-label": "Close notification" } } }),
  },
});

export const cssVariablesResolver: CSSVariablesResolver = (t) => ({
  variables: {},
  light: { "--mantine-color-dimmed": t.colors.gray[7]!, "--mantine-color-placeholder": t.colors.gray[6]!, "--mantine-color-error": t.colors.red[9]! },
  dark: { "--mantine-color-dimmed": t.colors.dark[1]!, "--mantine-color-placeholder": t.colors.dark[2]!, "--mantine-color-anchor": t.colors.blue[4]!, "--mantine-color-error": t.colors.red[4]! },
});

/** The same localStorage key the inline script of index.html reads before the first paint. */
export const colorSchemeManager = localStorageColorSchemeManager({ key: "mantine-color-scheme-value" });
