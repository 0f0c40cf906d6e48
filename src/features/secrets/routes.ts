// Routes of the secrets feature (stub; being implemented).
import { Elysia } from "elysia";
import type { Services } from "../../app";

export const secretsRoutes = ({ auth }: Services) => new Elysia({ name: "feature/secrets" }).use(auth);
