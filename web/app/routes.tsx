// Routes. Public pages (sign-in, sign-up, forgot, recover) stand alone; everything else needs a user and sits in
// the shell. Every page has its own URL, so links are deep-linkable and survive a reload.
import { Center, Loader } from "@mantine/core";
import type { ReactNode } from "react";
import { Redirect, Route, Switch, useLocation, useSearch } from "wouter";
import { certificateRoutes, sharedCertificateRoutes } from "../features/certificates/routes";
import { cspRoutes, sharedCspRoutes } from "../features/csp/routes";
import { helpRoutes } from "../features/help/routes";
import { responderRoutes } from "../features/responders/routes";
import { ScriptEditorPage } from "../features/scripts/script-editor-page";
import { ScriptsPage } from "../features/scripts/scripts-page";
import { SecretsPage } from "../features/secrets/secrets-page";
import { SettingsPage } from "../features/settings/settings-page";
import { TagsPage } from "../features/tags/tags-page";
import { TRACKER_ROUTES } from "../features/trackers/routes";
import { ForgotPage } from "../features/users/forgot-page";
import { RecoverPage } from "../features/users/recover-page";
import { safeNext } from "../features/users/safe-next";
import { useSelf } from "../features/users/session";
import { SignInPage } from "../features/users/sign-in-page";
import { SignUpPage } from "../features/users/sign-up-page";
import { ComingSoonPage } from "./coming-soon-page";
import { ErrorState } from "../components/states";
import { HomePage } from "./home-page";
import { NAV } from "./nav";
import { NotFoundPage } from "./not-found-page";
import { Shell } from "./shell";

function Loading() {
  return (
    <Center h="100vh">
      <Loader aria-label="Loading" />
    </Center>
  );
}

/** Shows `children` to a signed-in user; sends anyone else to the sign-in page, remembering where they were. */
function RequireUser({ children }: { children: ReactNode }) {
  const self = useSelf();
  const [location] = useLocation();
  const search = useSearch();
  if (self.isPending) return <Loading />;
  if (self.isError) return <ErrorState error={self.error} onRetry={() => self.refetch()} />;
  if (!self.data) {
    const next = location === "/" ? "" : `?next=${encodeURIComponent(location + (search ? `?${search}` : ""))}`;
    return <Redirect to={`/signin${next}`} replace />;
  }
  return <>{children}</>;
}

/** Public auth pages send a signed-in user on to the app. */
function PublicOnly({ children }: { children: ReactNode }) {
  const self = useSelf();
  if (self.isPending) return <Loading />;
  if (self.data) return <Redirect to={safeNext(new URLSearchParams(window.location.search).get("next"), window.location.origin)} replace />;
  return <>{children}</>;
}

export function AppRoutes() {
  return (
    <Switch>
      <Route path="/signin">
        <PublicOnly>
          <SignInPage />
        </PublicOnly>
      </Route>
      <Route path="/signup">
        <PublicOnly>
          <SignUpPage />
        </PublicOnly>
      </Route>
      <Route path="/forgot">
        <PublicOnly>
          <ForgotPage />
        </PublicOnly>
      </Route>
      {/* The recovery link works signed in or not: it sets a new password and starts a new session. */}
      <Route path="/recover" component={RecoverPage} />
      {/* Shared views (share links): public, signed in or not. */}
      {sharedCertificateRoutes}
      {sharedCspRoutes}
      <Route>
        <RequireUser>
          <Shell>
            <Switch>
              <Route path="/" component={HomePage} />
              <Route path="/tags" component={TagsPage} />
              <Route path="/secrets" component={SecretsPage} />
              <Route path="/scripts" component={ScriptsPage} />
              <Route path="/scripts/new" component={ScriptEditorPage} />
              <Route path="/scripts/:id" component={ScriptEditorPage} />
              <Route path="/settings" component={SettingsPage} />
              {certificateRoutes}
              {cspRoutes}
              {responderRoutes}
              {TRACKER_ROUTES}
              {helpRoutes}
              {NAV.flatMap((a) => a.items)
                .filter((i) => !i.ready)
                .map((item) => (
                  <Route key={item.path} path={item.path}>
                    <ComingSoonPage item={item} />
                  </Route>
                ))}
              <Route component={NotFoundPage} />
            </Switch>
          </Shell>
        </RequireUser>
      </Route>
    </Switch>
  );
}
