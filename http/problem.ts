/**
 * One error vocabulary, rendered in one place: every error leaves the server as
 * `application/problem+json` (RFC 9457) with the closed `code` vocabulary of docs/interface.md §7.
 */
import type { FieldError } from "../schema/issues.ts";
import type { ErrorCode, Problem } from "../schema/wire.ts";

const STATUS: Record<ErrorCode, { status: number; title: string }> = {
  invalid_request: { status: 400, title: "Invalid request" },
  unauthorized: { status: 401, title: "Unauthorized" },
  forbidden: { status: 403, title: "Forbidden" },
  not_found: { status: 404, title: "Not found" },
  payload_too_large: { status: 413, title: "Payload too large" },
  unsupported_media_type: { status: 415, title: "Unsupported media type" },
  idempotency_conflict: { status: 409, title: "Idempotency conflict" },
  rate_limited: { status: 429, title: "Too many requests" },
  upstream_error: { status: 502, title: "Upstream error" },
  upstream_timeout: { status: 504, title: "Upstream timeout" },
  unavailable: { status: 503, title: "Service unavailable" },
  internal: { status: 500, title: "Internal server error" },
};

export const statusOf = (code: ErrorCode): number => STATUS[code].status;

/** Thrown at the HTTP edge; `detail` must never carry a token, a prompt or SQL. */
export class HttpProblem extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extra: { errors?: FieldError[]; headers?: Record<string, string> } = {},
  ) {
    super(detail);
    this.name = "HttpProblem";
    this.status = STATUS[code].status;
  }
}

const bearerChallenge = (error: "invalid_token" | "insufficient_scope") => `Bearer realm="health", error="${error}"`;

export const unauthorized = (detail: string) =>
  new HttpProblem("unauthorized", detail, { headers: { "www-authenticate": bearerChallenge("invalid_token") } });

export const forbidden = (detail: string) =>
  new HttpProblem("forbidden", detail, { headers: { "www-authenticate": bearerChallenge("insufficient_scope") } });

/**
 * A shared store (Redis) could not answer, and admitting without it would be unsafe (a limit
 * not counted, a request that could run twice): refuse, and say when to come back.
 */
export const unavailable = (detail: string, retryAfterSeconds: number) =>
  new HttpProblem("unavailable", detail, { headers: { "retry-after": String(retryAfterSeconds) } });

export function problemBody(code: ErrorCode, detail: string, errors?: FieldError[]): Problem {
  const { status, title } = STATUS[code];
  const body: Problem = { type: `/problems/${code}`, title, status, detail, code };
  if (errors) body.errors = errors;
  return body;
}

export const PROBLEM_CONTENT_TYPE = "application/problem+json";
/** What Bun's Response.json sends, so text we serialize ourselves looks the same. */
export const JSON_CONTENT_TYPE = "application/json;charset=utf-8";
