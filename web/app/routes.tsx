// Routes, composed from each slice's routes.tsx. Public pages (sign-in, sign-up, forgot, recover: features/users)
// stand alone; everything else needs a user and sits in the shell. Every page has its own URL, so links are
// deep-linkable and survive a reload.
import { Route, Switch } from "wouter";
import { certificateRoutes, sharedCertificateRoutes } from "../features/certificates/routes";
import { cspRoutes, sharedCspRoutes } from "../features/csp/routes";
import { helpRoutes } from "../features/help/routes";
import { responderRoutes } from "../features/responders/routes";
import { scriptRoutes } from "../features/scripts/routes";
import { secretRoutes } from "../features/secrets/routes";
import { settingRoutes } from "../features/settings/routes";
import { tagRoutes } from "../features/tags/routes";
import { TRACKER_ROUTES } from "../features/trackers/routes";
import { RequireUser, userRoutes } from "../features/users/routes";
import { HomePage } from "./home-page";
import { NotFoundPage } from "./not-found-page";
import { Shell } from "./shell";

export function AppRoutes() {
  return (
    <Switch>
      {userRoutes}
      {/* Shared views (share links): public, signed in or not. */}
      {sharedCertificateRoutes}
      {sharedCspRoutes}
      <Route>
        <RequireUser>
          <Shell>
            <Switch>
              <Route path="/" component={HomePage} />
              {tagRoutes}
              {secretRoutes}
              {scriptRoutes}
              {settingRoutes}
              {certificateRoutes}
              {cspRoutes}
              {responderRoutes}
              {TRACKER_ROUTES}
              {helpRoutes}
              <Route component={NotFoundPage} />
            </Switch>
          </Shell>
        </RequireUser>
      </Route>
    </Switch>
  );
}
