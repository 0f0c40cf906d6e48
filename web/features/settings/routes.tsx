// The settings page's route for app/routes.tsx (in the first load, as it was before the slice had its routes.tsx).
// Its sections come from the api-keys, notification-email and user-data slices.
import { Route } from "wouter";
import { SettingsPage } from "./settings-page";

/** Routes inside the shell (signed in). */
export const settingRoutes = [<Route key="settings" path="/settings" component={SettingsPage} />];
