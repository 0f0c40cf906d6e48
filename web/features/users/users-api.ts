// The users slice's API calls (/api/auth/*): the signed-in user (GET /api/auth/session) is `null` when signed
// out, so routes can tell the two apart (the probe answers 200 either way, so a signed-out page load logs no failed
// request); sign-in, sign-up, recovery and password change; the server status (GET /api/status) the auth pages and
// the shell read.
import { useQuery, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { api, call } from "../../api/client";
import type { Status, User } from "../../api/types";

/** The account calls the auth pages and the password section make (their errors are shown where they happen). */
export const usersApi = {
  signIn: (body: { email: string; password: string }) => call(api.POST("/api/auth/signin", { body })),
  signUp: (body: { email: string; password: string }) => call(api.POST("/api/auth/signup", { body })),
  forgot: (body: { email: string }) => call(api.POST("/api/auth/forgot", { body })),
  recover: (body: { token: string; newPassword: string }) => call(api.POST("/api/auth/recover", { body })),
  changePassword: (body: { currentPassword: string; newPassword: string }) => call(api.POST("/api/auth/password", { body })),
};

export const SELF_KEY = ["self"] as const;

export function useSelf() {
  return useQuery<User | null>({
    queryKey: SELF_KEY,
    queryFn: async () => (await call(api.GET("/api/auth/session"))) ?? null,
    staleTime: 60_000,
  });
}

/** Server status: version, level (banner when unavailable) and optional features (mail, sign-up). */
export function useStatus() {
  return useQuery<Status>({ queryKey: ["status"], queryFn: () => call(api.GET("/api/status")), staleTime: 60_000 });
}

/**
 * Every cached answer except the session probe and the server status is dropped (it may be another user's).
 * Not `clear()`: that would also drop the probe's query under its mounted observers, which then never see the
 * new user.
 */
function forgetUserData(qc: QueryClient) {
  qc.removeQueries({ predicate: (q) => q.queryKey[0] !== SELF_KEY[0] && q.queryKey[0] !== "status" });
}

/** After sign-in, sign-up or recovery: the user is known, and every cached answer of a previous user is dropped. */
export function useSignedIn() {
  const qc = useQueryClient();
  return (user: User) => {
    forgetUserData(qc);
    qc.setQueryData(SELF_KEY, user);
  };
}

export function useSignOut() {
  const qc = useQueryClient();
  return async () => {
    await call(api.POST("/api/auth/signout")).catch(() => undefined);
    qc.setQueryData(SELF_KEY, null);
    forgetUserData(qc);
  };
}
