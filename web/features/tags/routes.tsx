// The tags page's route for app/routes.tsx (in the first load, as it was before the slice had its routes.tsx).
import { Route } from "wouter";
import { TagsPage } from "./tags-page";

/** Routes inside the shell (signed in). */
export const tagRoutes = [<Route key="tags" path="/tags" component={TagsPage} />];
