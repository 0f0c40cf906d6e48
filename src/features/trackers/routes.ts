// Routes of the trackers feature (stub; being implemented).
import { Elysia } from "elysia";
import type { Services } from "../../app";

export const trackersRoutes = ({ auth }: Services) => new Elysia({ name: "feature/trackers" }).use(auth);
