// The script library's routes for app/routes.tsx: the list and the full-page editor (in the first load, as they
// were before the slice had its routes.tsx).
import { Route } from "wouter";
import { ScriptEditorPage } from "./script-editor-page";
import { ScriptsPage } from "./scripts-page";

/** Routes inside the shell (signed in). */
export const scriptRoutes = [
  <Route key="scripts" path="/scripts" component={ScriptsPage} />,
  <Route key="script-new" path="/scripts/new" component={ScriptEditorPage} />,
  <Route key="script" path="/scripts/:id" component={ScriptEditorPage} />,
];
