// Routes of the api-keys feature (stub; being implemented).
import { Elysia } from "elysia";
import type { Services } from "../../app";

export const apiKeysRoutes = ({ auth }: Services) => new Elysia({ name: "feature/api-keys" }).use(auth);
