// Routes of the users feature (stub; being implemented): /api/auth/*, /api/users/*, /api/user/subscription.
import { Elysia } from "elysia";
import type { Services } from "../../app";

export const usersRoutes = ({ auth }: Services) => new Elysia({ name: "feature/users" }).use(auth);
