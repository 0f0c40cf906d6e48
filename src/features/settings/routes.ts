// Routes of the settings feature (stub; being implemented).
import { Elysia } from "elysia";
import type { Services } from "../../app";

export const settingsRoutes = ({ auth }: Services) => new Elysia({ name: "feature/settings" }).use(auth);
