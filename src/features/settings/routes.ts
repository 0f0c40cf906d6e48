// /api/user/settings: per-user UI and notification preferences (supplement §9).
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { Named, op, Opt, StringEnum, T } from "../../platform/http/contract";
import type { SettingsService } from "./service";

const Members = {
  "common.uiTheme": StringEnum(["light", "dark", "system"], { description: "UI theme" }),
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
    { description: "key → new value, or null to remove it; an unknown key or an invalid value → 400 and nothing is applied; total stored size ≤ 64 KiB" },
  ),
);

/** What the routes use: the auth plugin and the feature's own service (app.ts wires them). */
export interface SettingsRoutesDeps {
  auth: AuthPlugin;
  settings: SettingsService;
}

export const settingsRoutes = ({ auth, settings }: SettingsRoutesDeps) =>
  new Elysia({ name: "feature/settings" })
    .use(auth)
    .get("/api/user/settings", ({ user }) => settings.get(user.id), {
      auth: "user",
      detail: op({ tags: ["settings"], summary: "Get the user's settings ({} when none)", responses: { 200: UserSettings } }),
    })
    .post("/api/user/settings", ({ user, body }) => settings.set(user.id, body), {
      auth: "user",
      // Validated by the service (a JSON object of known keys): an unknown key is a 400 naming it, a non-object body a
      // 400, instead of being coerced or silently dropped by schema normalisation.
      body: t.Unknown(),
      detail: op({
        tags: ["settings"],
        summary: "Set or remove settings; returns the full merged settings",
        body: UserSettingsSetter,
        responses: { 200: UserSettings },
        example: { "common.uiTheme": "dark" },
      }),
    });
