// The CSP pages' routes (list, editor, the shared view), each loaded on demand.
import { Route } from "wouter";
import { lazyPage } from "../../components/lazy-page";

const CspPage = lazyPage(() => import("./csp-page").then((m) => m.CspPage));
const PolicyEditorPage = lazyPage(() => import("./policy-editor-page").then((m) => m.PolicyEditorPage));
const SharedPolicyPage = lazyPage(() => import("./shared-policy-page").then((m) => m.SharedPolicyPage));

/** Routes inside the shell (signed in). */
export const cspRoutes = [
  <Route key="csp" path="/csp" component={CspPage} />,
  <Route key="csp-new" path="/csp/new" component={PolicyEditorPage} />,
  <Route key="csp-edit" path="/csp/:id" component={PolicyEditorPage} />,
];

/** The shared view: public, outside the shell (works signed out). */
export const sharedCspRoutes = [<Route key="shared-csp" path="/shared/csp/:id" component={SharedPolicyPage} />];
