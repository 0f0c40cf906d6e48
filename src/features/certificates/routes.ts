// Routes of the certificates feature (stub; being implemented).
import { Elysia } from "elysia";
import type { Services } from "../../app";

export const certificatesRoutes = ({ auth }: Services) => new Elysia({ name: "feature/certificates" }).use(auth);
