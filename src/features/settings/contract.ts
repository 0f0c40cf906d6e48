// The wire shapes of per-user settings (supplement §9): the one declaration of each (TypeBox: the OpenAPI document
// and the web types come from it); the TypeScript types are their `Static`. The known keys, in response order, are
// the members of UserSettings.
import { Named, Opt, StringEnum, T, type Static } from "../../platform/http/contract";
import { UI_THEMES } from "./shared-rules";

const Members = {
  "common.uiTheme": StringEnum(UI_THEMES, { description: "UI theme" }),
  "common.sidebarCollapsed": T.Object({ nav: T.Optional(T.Boolean()), sections: T.Optional(T.Array(T.String())) }, { description: "UI layout" }),
  "common.globalScopeTagIds": T.Array(T.String(), { description: "UI global tag scope (tag ids)" }),
  "certificates.doNotShowSelfSignedWarning": T.Boolean({ description: "UI hint" }),
  "certificates.doNotShowPrivateKeysWarning": T.Boolean({ description: "UI hint" }),
  "notifications.unsubscribed": T.Boolean({ description: "true suppresses every notification email; set by unsubscribe" }),
};

export const UserSettings = Named(
  "UserSettings",
  T.Object(
    {
      "common.uiTheme": T.Optional(Members["common.uiTheme"]),
      "common.sidebarCollapsed": T.Optional(Members["common.sidebarCollapsed"]),
      "common.globalScopeTagIds": T.Optional(Members["common.globalScopeTagIds"]),
      "certificates.doNotShowSelfSignedWarning": T.Optional(Members["certificates.doNotShowSelfSignedWarning"]),
      "certificates.doNotShowPrivateKeysWarning": T.Optional(Members["certificates.doNotShowPrivateKeysWarning"]),
      "notifications.unsubscribed": T.Optional(Members["notifications.unsubscribed"]),
    },
    { description: "the stored settings ({} when none)" },
  ),
);
export type UserSettings = Static<typeof UserSettings>;
export type SettingKey = keyof UserSettings;
/** The known keys, in response order. */
export const SETTING_KEYS = Object.keys(UserSettings.properties) as SettingKey[];

export const UserSettingsSetter = Named(
  "UserSettingsSetter",
  T.Object(
    {
      "common.uiTheme": Opt(Members["common.uiTheme"]),
      "common.sidebarCollapsed": Opt(Members["common.sidebarCollapsed"]),
      "common.globalScopeTagIds": Opt(Members["common.globalScopeTagIds"]),
      "certificates.doNotShowSelfSignedWarning": Opt(Members["certificates.doNotShowSelfSignedWarning"]),
      "certificates.doNotShowPrivateKeysWarning": Opt(Members["certificates.doNotShowPrivateKeysWarning"]),
      "notifications.unsubscribed": Opt(Members["notifications.unsubscribed"]),
    },
    {
      description:
        "key → new value, or null to remove it; an unknown key or an invalid value → 400 and nothing is applied; total stored size ≤ 64 KiB",
    },
  ),
);
