// Routes of the tags feature (stub; being implemented).
import { Elysia } from "elysia";
import type { Services } from "../../app";

export const tagsRoutes = ({ auth }: Services) => new Elysia({ name: "feature/tags" }).use(auth);
