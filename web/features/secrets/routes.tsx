// The secrets page's route for app/routes.tsx (in the first load, as it was before the slice had its routes.tsx).
import { Route } from "wouter";
import { SecretsPage } from "./secrets-page";

/** Routes inside the shell (signed in). */
export const secretRoutes = [<Route key="secrets" path="/secrets" component={SecretsPage} />];
