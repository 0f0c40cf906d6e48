// Routes of the scripts feature (stub; being implemented).
import { Elysia } from "elysia";
import type { Services } from "../../app";

export const scriptsRoutes = ({ auth }: Services) => new Elysia({ name: "feature/scripts" }).use(auth);
