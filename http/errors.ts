/**
 * The single place errors are rendered. Elysia's own errors (validation, parse, not found) and
 * anything unexpected become problem+json (docs/interface.md §7). Logs carry the request id and the
 * error's class only: never a stack, SQL, a token or a prompt.
 */
import { Elysia, ValidationError } from "elysia";
import { type FieldError, flattenIssues, type StandardIssue } from "../schema/issues.ts";
import type { ErrorCode } from "../schema/wire.ts";
import { bodyValue } from "./body.ts";
import { HttpProblem, PROBLEM_CONTENT_TYPE, problemBody, statusOf } from "./problem.ts";
import type { RequestState } from "./context.ts";

interface StandardLike {
  "~standard": {
    validate: (value: unknown) => { issues?: ReadonlyArray<StandardIssue> } | Promise<unknown>;
  };
}

const isStandard = (x: unknown): x is StandardLike => typeof x === "object" && x !== null && "~standard" in x;

/** Elysia reports Standard Schema paths as "[object Object]": validate again for real ones. */
function validationErrors(error: ValidationError): FieldError[] {
  const candidates: unknown[] = [error.validator, (error.validator as { schema?: unknown }).schema];
  const schema = candidates.find(isStandard);
  const location = error.type === "body" ? "" : `${error.type}.`;
  if (schema) {
    const result = schema["~standard"].validate(bodyValue(error.value));
    if (!(result instanceof Promise) && result.issues) {
      return flattenIssues(result.issues).map((e) => ({ path: location + e.path, message: e.message }));
    }
  }
  return [{ path: error.type, message: "is invalid" }];
}

export interface ProblemParts {
  code: ErrorCode;
  detail: string;
  errors?: FieldError[];
  headers?: Record<string, string>;
}

export function classifyError(code: string | number, error: unknown): ProblemParts {
  // Elysia wraps whatever a parse hook throws in a ParseError; ours carry the real problem.
  const cause = error instanceof Error ? error.cause : undefined;
  if (code === "PARSE" && cause instanceof HttpProblem)
    return { code: cause.code, detail: cause.detail, ...cause.extra };
  if (error instanceof HttpProblem) return { code: error.code, detail: error.detail, ...error.extra };
  if (error instanceof ValidationError) {
    return { code: "invalid_request", detail: "The request is invalid", errors: validationErrors(error) };
  }
  switch (code) {
    case "PARSE":
      return { code: "invalid_request", detail: "The request body is not valid JSON" };
    case "NOT_FOUND":
      return { code: "not_found", detail: "No such resource" };
    default:
      return { code: "internal", detail: "The server failed to handle this request" };
  }
}

export const errorHandler = new Elysia({ name: "health.errors" }).onError(
  { as: "global" },
  // The context is destructured, never passed whole (see addServerTiming in context.ts).
  function renderProblem({ code, error, set, request, route, ...decorated }) {
    // Absent only if Elysia failed before any hook ran.
    const state = (decorated as { state?: RequestState }).state;
    const parts = classifyError(code, error);
    const requestId = state?.requestId ?? crypto.randomUUID();
    state?.fail(error);
    if (parts.code === "internal") {
      const name = error instanceof Error ? error.name : typeof error;
      console.error(`[health] request ${requestId} failed: ${name}`);
    }
    const headers: Record<string, string> = { "content-type": PROBLEM_CONTENT_TYPE, "x-request-id": requestId };
    for (const [name, value] of Object.entries(set.headers)) if (typeof value === "string") headers[name] = value;
    Object.assign(headers, parts.headers);
    headers["content-type"] = PROBLEM_CONTENT_TYPE;
    if (state) headers["server-timing"] = state.serverTiming();
    const status = statusOf(parts.code);
    state?.finish(
      code === "NOT_FOUND" ? "unmatched" : ((route as string | undefined) ?? "unmatched"),
      status,
      parts.code,
    );
    // Refused before its body was read (401, 413, 415): close the connection rather than leave a
    // half-sent body on it, which would also keep a graceful stop waiting forever.
    if (request?.body != null && !request.bodyUsed) headers.connection = "close";
    return new Response(JSON.stringify(problemBody(parts.code, parts.detail, parts.errors)), { status, headers });
  },
);
