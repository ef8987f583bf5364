/**
 * `health trigger`: which API token and organization a trigger uses, the REST calls of the trigger
 * endpoint (docs/interface.md §4.2), and its problems in the builder's words. A token is
 * never printed, and a stored one is only ever sent to the server it was stored for.
 */
import * as v from "valibot";
import { CliError, UsageError } from "../errors.ts";
import { callServer, problemDetail, timedFetch, trpcClient, unreachable } from "./api.ts";
import { isExpired } from "./auth.ts";
import { readCredentials } from "./home.ts";
import { type RunView, runRecordSchema } from "./runs.ts";
import { credentialsFor, resolveServer } from "./server.ts";
import { CLI_VERSION } from "./version.ts";
import { type TriggerResponse, triggerResponseSchema } from "../../schema/wire.ts";

/** A failure worth retrying while waiting for a run: no answer, 429 or 5xx. */
export class TransientError extends CliError {
  constructor(message: string, options: { hint?: string; retryAfterMs?: number; unreachable?: boolean } = {}) {
    super(message, { hint: options.hint });
    this.name = "TransientError";
    this.retryAfterMs = options.retryAfterMs;
    this.unreachable = options.unreachable ?? false;
  }
  readonly retryAfterMs: number | undefined;
  /** No answer at all (refused, reset, timed out), as opposed to an answer saying "later". */
  readonly unreachable: boolean;
}

export type TokenSource = "--token" | "HEALTH_TOKEN" | "stored token";

export interface TriggerToken {
  secret: string;
  source: TokenSource;
}

/** The same rule as the server's idempotency plugin. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
/** Organization ids are `org_…`; anything URL-safe is let through and the server decides. */
const ORG_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

const mintHint = (loopId: string) =>
  `Create one with health tokens create --name trigger --scope loop:run:${loopId}, then pass it with --token or HEALTH_TOKEN`;

const canTrigger = (scopes: readonly string[], loopId: string): boolean =>
  scopes.some((scope) => scope === "loop:run" || scope === `loop:run:${loopId}`);

/** `--token`, else `HEALTH_TOKEN`, else the token stored for this server by `health login --token`. */
export function resolveTriggerToken(server: string, flag: string | undefined, loopId: string): TriggerToken {
  if (flag !== undefined) {
    const secret = flag.trim();
    if (secret === "") throw new UsageError("--token needs a value");
    return { secret, source: "--token" };
  }
  const env = process.env.HEALTH_TOKEN?.trim();
  if (env !== undefined && env !== "") return { secret: env, source: "HEALTH_TOKEN" };
  const stored = credentialsFor(server)?.token;
  if (stored === undefined) {
    throw new CliError(`No API token to trigger ${loopId} on ${server}`, { hint: mintHint(loopId) });
  }
  // The scopes were recorded when the token was stored; a token's scopes never change.
  if (!canTrigger(stored.scopes, loopId)) {
    const scopes = stored.scopes.length > 0 ? stored.scopes.join(", ") : "none";
    throw new CliError(
      `The stored token${stored.name !== undefined ? ` "${stored.name}"` : ""} cannot trigger ${loopId} (its scopes: ${scopes})`,
      { hint: `A trigger needs scope loop:run or loop:run:${loopId}. ${mintHint(loopId)}` },
    );
  }
  return { secret: stored.secret, source: "stored token" };
}

/**
 * `--org`, else `HEALTH_ORG`, else the organization of the admin session stored for this server
 * (asked of the server with auth.me). A token does not say its organization, and /cli/account
 * only accepts cli:run tokens, so without one of these the organization is unknown.
 */
export async function resolveOrg(server: string, flag: string | undefined): Promise<string> {
  const given = flag ?? (process.env.HEALTH_ORG !== "" ? process.env.HEALTH_ORG : undefined);
  if (given !== undefined) {
    const org = given.trim();
    const source = flag !== undefined ? "--org" : "HEALTH_ORG";
    if (!ORG_ID_PATTERN.test(org)) throw new UsageError(`${source} must be an organization id such as org_3vQ…`);
    return org;
  }
  const session = credentialsFor(server, readCredentials())?.session;
  const hint = "The org id is the org_… part of each trigger URL in health loops list";
  if (session === undefined) {
    throw new UsageError(
      "Which organization? Pass --org <org_id> or set HEALTH_ORG (or sign in with health login to look it up)",
      hint,
    );
  }
  if (isExpired(session)) {
    throw new CliError("Your admin session expired, so the organization is unknown; run health login", {
      hint: `Or pass --org. ${hint}`,
    });
  }
  const me = await callServer(
    server,
    () => trpcClient(server, session.secret).auth.me.query(),
    (failure) =>
      failure.code === "UNAUTHORIZED"
        ? new CliError("Your admin session expired, so the organization is unknown; run health login", {
            hint: `Or pass --org. ${hint}`,
          })
        : undefined,
  );
  return me.org.id;
}

/** The server a trigger goes to (`--server`, HEALTH_URL, the stored login, settings, default). */
export const triggerServer = (flag: string | undefined): string => resolveServer(flag).url;

export interface LoopTarget {
  server: string;
  orgId: string;
  loopId: string;
  token: TriggerToken;
}

const loopUrl = (t: LoopTarget): string =>
  `${t.server}/loop/${encodeURIComponent(t.orgId)}/${encodeURIComponent(t.loopId)}`;

async function send(target: LoopTarget, url: string, init: RequestInit): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${target.token.secret}`);
  headers.set("x-service-cli-version", CLI_VERSION);
  try {
    return await timedFetch()(url, { ...init, headers });
  } catch (error) {
    const failure = unreachable(target.server, error);
    throw new TransientError(failure.message, { hint: failure.hint, unreachable: true });
  }
}

/** Turns a problem+json answer of the trigger endpoint into one clear line (exit 1). */
export async function loopProblem(target: LoopTarget, response: Response, runId?: string): Promise<CliError> {
  const { detail } = await problemDetail(response);
  const via = `the token from ${target.token.source}`;
  switch (response.status) {
    case 400:
      return new CliError(`The server refused the request: ${detail}`);
    case 401:
      return new CliError(`The server at ${target.server} rejected ${via}: ${detail}`, {
        hint: `Check it has not been revoked (health tokens list). ${mintHint(target.loopId)}`,
      });
    case 403:
      return new CliError(`Forbidden: ${via} may not trigger ${target.loopId} in ${target.orgId} (${detail})`, {
        hint: `A trigger needs a token of organization ${target.orgId} with scope loop:run or loop:run:${target.loopId}; check --org and the token's scopes`,
      });
    case 404:
      return new CliError(`Not found: ${detail}`, {
        hint:
          runId === undefined
            ? "health loops list shows the loop ids of your organization"
            : `Is ${runId} a run of ${target.loopId}? health runs list shows the runs`,
      });
    case 409:
      return new CliError(`Idempotency conflict: ${detail}`, {
        hint: "Use a new --idempotency-key for a different body, or retry once the first request has finished",
      });
    case 413:
      return new CliError(`The body is too large: ${detail}`, { hint: "Trigger bodies are limited to 1 MiB" });
    case 415:
      return new CliError(`Unsupported media type: ${detail}`);
    case 429: {
      const retry = Number(response.headers.get("retry-after"));
      const seconds = Number.isFinite(retry) && retry > 0 ? retry : undefined;
      return new TransientError(`Rate limited: ${detail}`, {
        hint: seconds !== undefined ? `Retry in ${seconds} s` : "Retry in a moment",
        retryAfterMs: seconds !== undefined ? seconds * 1_000 : undefined,
      });
    }
    default:
      return response.status >= 500
        ? new TransientError(`The server at ${target.server} failed (HTTP ${response.status}): ${detail}`)
        : new CliError(`The request failed: ${detail}`);
  }
}

export type Started = TriggerResponse;

/**
 * POST /loop/{org}/{loop}. `body` is the JSON text as given (validated already), so the loop gets
 * exactly the value that was typed; undefined sends a bodiless POST (`event.body === undefined`).
 */
export async function startRun(
  target: LoopTarget,
  body: string | undefined,
  idempotencyKey: string | undefined,
): Promise<Started & { replayed: boolean }> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (idempotencyKey !== undefined) headers["idempotency-key"] = idempotencyKey;
  const response = await send(target, loopUrl(target), { method: "POST", headers, body });
  if (!response.ok) throw await loopProblem(target, response);
  const parsed = v.safeParse(triggerResponseSchema, await response.json().catch(() => undefined));
  if (!parsed.success)
    throw new CliError(`The server at ${target.server} sent a trigger response this CLI does not understand`);
  return { ...parsed.output, replayed: response.headers.get("idempotent-replayed") === "true" };
}

/** GET /loop/{org}/{loop}/runs/{runId} with the same token. */
export async function readRun(target: LoopTarget, runId: string): Promise<RunView> {
  const response = await send(target, `${loopUrl(target)}/runs/${encodeURIComponent(runId)}`, { method: "GET" });
  if (!response.ok) throw await loopProblem(target, response, runId);
  const raw: unknown = await response.json().catch(() => undefined);
  if (!v.is(runRecordSchema, raw)) {
    throw new CliError(`The server at ${target.server} sent a run this CLI does not understand`);
  }
  // The record as the server sent it (field order and all), now that its shape is known.
  return raw;
}
