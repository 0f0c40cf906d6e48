// Request-wide HTTP mechanics: the headers of every /api answer (nosniff, no-store), body size limits and raw body
// capture, and the one mapper from errors to `{message, code}` JSON responses (supplement §2).
import { Elysia } from "elysia";
import type { Logger } from "../log";
import { bodyLimitFor, checkContentLength, PendingBody, pendingBodies, RawBody, readBodyBytes, requestPath, type BodyLimits } from "./body";
import { ApiError } from "../core/errors";

/** `settings.statusCode: must be ...` from a TypeBox/Elysia validation error. */
function validationMessage(error: any): string {
  const all: any[] = Array.isArray(error?.all) ? error.all : [];
  const first = all.find((e) => e?.path !== undefined) ?? all[0];
  if (!first) return "Invalid input";
  const path =
    String(first.path ?? "")
      .replace(/^\//, "")
      .replace(/\//g, ".") ||
    (error.type ?? "body");
  const schemaMsg = first.schema?.error ?? first.schema?.description;
  const message = String(first.message ?? "is invalid").replace(/^Expected required property$/, "is required");
  return `${path}: ${typeof schemaMsg === "string" && first.schema?.error ? schemaMsg : message}`;
}

const isStackOverflow = (error: unknown) => error instanceof RangeError && /call stack|recursion/i.test(error.message);

export function errorResponse(status: number, code: string, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ message, code }), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
  });
}

/** Headers of every /api answer: no MIME sniffing of JSON (or of any download), and no caching of what carries session
 *  state, tokens or user data (a route that chooses its own Cache-Control keeps it). Responder hits never get here. */
const API_HEADERS = { "x-content-type-options": "nosniff", "cache-control": "no-store" };

export function httpPlugin(limits: BodyLimits, log: Logger) {
  return (
    new Elysia({ name: "platform/http" })
      .onRequest(({ request, set }) => {
        const path = requestPath(request);
        if (path === "/api" || path.startsWith("/api/")) Object.assign(set.headers, API_HEADERS);
      })
      // Check order (supplement §1): unknown route 404 → 413 → credentials. Both hooks run only for a matched
      // route, before its `auth` transform: parse for every route that reads a body (Content-Length first, then
      // counting the bytes as they arrive), transform for the others (a GET announcing a huge body).
      .onParse({ as: "global" }, async ({ request, contentType }) => {
        const path = requestPath(request);
        const limit = bodyLimitFor(path, limits);
        checkContentLength(request, limit);
        const type = request.headers.get("content-type") ?? contentType ?? "";
        if (limits.deferred?.(path) && /^\d+$/.test(request.headers.get("content-length") ?? "")) {
          const pending = new PendingBody(request, limit, type, path);
          pendingBodies.set(request, pending);
          return pending;
        }
        return new RawBody(await readBodyBytes(request, limit), type, path);
      })
      .onTransform({ as: "global" }, ({ request }) => {
        checkContentLength(request, bodyLimitFor(requestPath(request), limits));
      })
      .onError({ as: "global" }, ({ code, error, request }) => {
        // A deferred body still unread (the answer needs none): read away beside the answer, which goes out at once
        // (a second upload's 429 before its body), so that the client is not reset while it still sends.
        void pendingBodies.get(request)?.drain();
        // Errors thrown while reading the body (413) reach us wrapped in Elysia's ParseError.
        const apiError =
          error instanceof ApiError ? error : (error as Error)?.cause instanceof ApiError ? ((error as Error).cause as ApiError) : undefined;
        if (apiError) return errorResponse(apiError.status, apiError.code, apiError.message, apiError.headers);
        switch (code) {
          case "VALIDATION":
            // A path parameter that does not even decode (`%ZZ`) names no resource: 404 like any malformed id.
            if ((error as { type?: string }).type === "params") return errorResponse(404, "NOT_FOUND", "Not found");
            return errorResponse(400, "INVALID_INPUT", validationMessage(error));
          case "PARSE":
            return errorResponse(400, "INVALID_JSON", "Request body could not be parsed");
          case "NOT_FOUND":
            return errorResponse(404, "NOT_FOUND", "Not found");
          case "INVALID_COOKIE_SIGNATURE":
          case "INVALID_FILE_TYPE":
            return errorResponse(400, "INVALID_INPUT", "Invalid input");
        }
        // Backstop for input nested too deeply for a recursive walk (decodeBody already refuses deep JSON):
        // a stack overflow while validating is the caller's input, not a server fault.
        if (isStackOverflow(error)) {
          log.warn("stack overflow handling a request", { method: request.method, path: requestPath(request) });
          return errorResponse(400, "INVALID_INPUT", "Request input is nested too deeply");
        }
        if (/FOREIGN KEY constraint failed|violates foreign key constraint/i.test(String((error as Error)?.message)))
          return errorResponse(400, "INVALID_INPUT", "A referenced resource does not exist (it may have just been deleted)");
        log.error("unhandled error", { method: request.method, path: requestPath(request), error: String((error as Error)?.stack ?? error) });
        return errorResponse(500, "INTERNAL", "Internal error");
      })
  );
}
