// /api/user/settings: per-user UI and notification preferences (supplement §9).
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import type { SettingsService } from "./service";

const UserSettingsSchema = t.Object({
  "common.uiTheme": t.Optional(t.Union([t.Literal("light"), t.Literal("dark"), t.Literal("system")])),
  "common.sidebarCollapsed": t.Optional(t.Object({ nav: t.Optional(t.Boolean()), sections: t.Optional(t.Array(t.String())) })),
  "common.globalScopeTagIds": t.Optional(t.Array(t.String())),
  "certificates.doNotShowSelfSignedWarning": t.Optional(t.Boolean()),
  "certificates.doNotShowPrivateKeysWarning": t.Optional(t.Boolean()),
  "notifications.unsubscribed": t.Optional(t.Boolean({ description: "true suppresses every notification email" })),
});

// The setter is validated by the service (a JSON object of known keys), so an unknown key is a 400 naming it
// and a non-object body is a 400, instead of being coerced or silently dropped by schema normalisation.
const SetterSchema = t.Unknown({
  description: "setting key → new value, or null to remove it; unknown keys or invalid values → 400 and nothing is applied",
});

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
      response: UserSettingsSchema,
      detail: { tags: ["settings"], summary: "Get the user's settings ({} when none)" },
    })
    .post("/api/user/settings", ({ user, body }) => settings.set(user.id, body), {
      auth: "user",
      body: SetterSchema,
      response: UserSettingsSchema,
      detail: { tags: ["settings"], summary: "Set or remove settings; returns the full merged settings" },
    });
