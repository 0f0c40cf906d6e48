// Routes of the responders feature (stub; being implemented).
import { Elysia } from "elysia";
import type { Services } from "../../app";

export const respondersRoutes = ({ auth }: Services) => new Elysia({ name: "feature/responders" }).use(auth);
