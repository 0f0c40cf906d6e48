// /api/user/settings: per-user UI and notification preferences (supplement §9), with the schemas of contract.ts.
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { op } from "../../platform/http/contract";
import { UserSettings, UserSettingsSetter } from "./contract";
import type { SettingsService } from "./service";

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
      // Not looseBody (the one exception): looseBody drops unknown members, and here an unknown key is a 400 naming it
      // (supplement §9), and a non-object body a 400. The service validates the whole setter.
      body: t.Unknown(),
      detail: op({
        tags: ["settings"],
        summary: "Set or remove settings; returns the full merged settings",
        body: UserSettingsSetter,
        responses: { 200: UserSettings },
        example: { "common.uiTheme": "dark" },
      }),
    });
