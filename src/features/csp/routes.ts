// Routes of the csp feature (stub; being implemented).
import { Elysia } from "elysia";
import type { Services } from "../../app";

export const cspRoutes = ({ auth }: Services) => new Elysia({ name: "feature/csp" }).use(auth);
