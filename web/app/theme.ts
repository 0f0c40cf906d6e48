// Mantine theme, tuned for WCAG AA contrast (axe-core finds no serious violation in either scheme):
// - filled colours use shade 8 in both schemes (shade 6 blue on white text is 4.32:1, shade 5 is 2.99:1);
// - "dimmed" text is gray.7 on light and dark.1 on dark (Mantine's defaults are 3.3:1 and 4.0:1);
// - field error text is red.9 on light and red.4 on dark (Mantine's red.6 is 3.3:1 on white; red.8 is 4.28:1 on a filled
//   fieldset's gray.0);
// - links are always underlined, so links inside text are told apart by more than colour.
import {
  Alert,
  Anchor,
  createTheme,
  FileInput,
  Loader,
  Menu,
  MultiSelect,
  Notification,
  Select,
  TagsInput,
  localStorageColorSchemeManager,
  type CSSVariablesResolver,
} from "@mantine/core";

const LIST_STYLES = { options: { maxHeight: "min(300px, 50vh)", overflowY: "auto" as const } };

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
    // Keyboard: typing an option's name and pressing Enter picks it (a plain Select ignored typing, so Enter kept
    // the old value: a POST responder silently stayed ANY). Typing filters, the first match is highlighted.
    // A dropdown's list scrolls natively and is itself a tab stop: the scroll viewport Mantine puts inside the
    // listbox could not be focusable without breaking the listbox's structure (axe scrollable-region-focusable,
    // aria-required-children). Arrows still move through the options (aria-activedescendant).
    Select: Select.extend({
      defaultProps: { searchable: true, selectFirstOptionOnChange: true, nothingFoundMessage: "No option matches", withScrollArea: false },
      styles: LIST_STYLES,
    }),
    MultiSelect: MultiSelect.extend({ defaultProps: { selectFirstOptionOnChange: true, withScrollArea: false }, styles: LIST_STYLES }),
    TagsInput: TagsInput.extend({ defaultProps: { withScrollArea: false }, styles: LIST_STYLES }),
    ComboboxOptions: { defaultProps: { tabIndex: 0 } },
    // A spinner's aria-label needs a role to be read (axe aria-prohibited-attr on a bare span): a status.
    Loader: Loader.extend({ defaultProps: { role: "status" } }),
    // No focus placeholder in menus (axe aria-required-children: a focusable presentational child of role=menu);
    // a menu opened from the keyboard focuses its first item.
    Menu: Menu.extend({ defaultProps: { withInitialFocusPlaceholder: false } }),
    // The clear button of a file field has no accessible name otherwise (axe button-name, critical).
    FileInput: FileInput.extend({ defaultProps: { clearButtonProps: { "aria-label": "Clear the file" } } }),
  },
});

export const cssVariablesResolver: CSSVariablesResolver = (t) => ({
  variables: {},
  // --app-danger-text: destructive menu items ("Delete …"); Mantine's red.6 is 3.3:1 on white, 4.1:1 on dark.7.
  light: {
    "--mantine-color-dimmed": t.colors.gray[7]!,
    "--mantine-color-placeholder": t.colors.gray[6]!,
    "--mantine-color-error": t.colors.red[9]!,
    "--app-danger-text": t.colors.red[9]!,
  },
  dark: {
    "--mantine-color-dimmed": t.colors.dark[1]!,
    "--mantine-color-placeholder": t.colors.dark[2]!,
    "--mantine-color-anchor": t.colors.blue[4]!,
    "--mantine-color-error": t.colors.red[4]!,
    "--app-danger-text": t.colors.red[4]!,
  },
});

/** The same localStorage key the inline script of index.html reads before the first paint. */
export const colorSchemeManager = localStorageColorSchemeManager({ key: "mantine-color-scheme-value" });
