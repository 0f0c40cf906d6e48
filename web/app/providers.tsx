// Providers: Mantine (theme, colour scheme, modals, notifications), TanStack Query (server state), and the
// router whose navigations a dirty form can hold back (use-unsaved-guard.ts).
import { MantineProvider } from "@mantine/core";
import { ModalsProvider } from "@mantine/modals";
import { Notifications } from "@mantine/notifications";
import { QueryCache, QueryClient, QueryClientProvider } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { Router } from "wouter";
import { ApiError } from "../api/client";
import { useDialogFocusReturn } from "../components/focus";
import { useGuardedLocation } from "../components/use-unsaved-guard";
import { SELF_KEY } from "../features/users/users-api";
import { colorSchemeManager, cssVariablesResolver, theme } from "./theme";

const queryClient: QueryClient = new QueryClient({
  queryCache: new QueryCache({
    // A session that ended (signed out elsewhere, expired, password changed) while the page was open: forget
    // the user, and the route guard shows the sign-in page.
    onError: (err, query) => {
      if (err instanceof ApiError && err.status === 401 && query.queryKey[0] !== SELF_KEY[0]) queryClient.setQueryData(SELF_KEY, null);
    },
  }),
  defaultOptions: {
    queries: {
      retry: (n, err) => !(err instanceof ApiError && err.status > 0 && err.status < 500) && n < 2,
      staleTime: 10_000,
      refetchOnWindowFocus: false,
    },
  },
});

export function Providers({ children }: { children: ReactNode }) {
  useDialogFocusReturn();
  return (
    <MantineProvider theme={theme} defaultColorScheme="auto" colorSchemeManager={colorSchemeManager} cssVariablesResolver={cssVariablesResolver}>
      <QueryClientProvider client={queryClient}>
        <ModalsProvider labels={{ confirm: "Confirm", cancel: "Cancel" }}>
          {/* Bottom right: toasts at the top covered page actions such as "Run now" (issue 30). */}
          <Notifications position="bottom-right" />
          <Router hook={useGuardedLocation}>{children}</Router>
        </ModalsProvider>
      </QueryClientProvider>
    </MantineProvider>
  );
}
