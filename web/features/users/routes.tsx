// The users slice's routes for app/routes.tsx: the public account pages (sign-in, sign-up, forgot, recover) and
// the two guards, RequireUser (everything in the shell) and PublicOnly (the auth pages send a signed-in user on).
import { Center, Loader } from "@mantine/core";
import type { ReactNode } from "react";
import { Redirect, Route, useLocation, useSearch } from "wouter";
import { ErrorState } from "../../components/states";
import { ForgotPage } from "./forgot-page";
import { RecoverPage } from "./recover-page";
import { safeNext } from "./safe-next";
import { SignInPage } from "./sign-in-page";
import { SignUpPage } from "./sign-up-page";
import { useSelf } from "./users-api";

function Loading() {
  return (
    <Center h="100vh">
      <Loader aria-label="Loading" />
    </Center>
  );
}

/** Shows `children` to a signed-in user; sends anyone else to the sign-in page, remembering where they were. */
export function RequireUser({ children }: { children: ReactNode }) {
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

/** The account pages: public, outside the shell. */
export const userRoutes = [
  <Route key="signin" path="/signin">
    <PublicOnly>
      <SignInPage />
    </PublicOnly>
  </Route>,
  <Route key="signup" path="/signup">
    <PublicOnly>
      <SignUpPage />
    </PublicOnly>
  </Route>,
  <Route key="forgot" path="/forgot">
    <PublicOnly>
      <ForgotPage />
    </PublicOnly>
  </Route>,
  // The recovery link works signed in or not: it sets a new password and starts a new session.
  <Route key="recover" path="/recover" component={RecoverPage} />,
];
