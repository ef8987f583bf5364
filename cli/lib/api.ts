/**
 * Talking to a health server: the typed tRPC client for admin procedures, and plain fetch for
 * the REST endpoints. Every failure becomes one CliError line; a secret never appears in one.
 */
import { createTRPCClient, httpLink, TRPCClientError } from "@trpc/client";
import * as v from "valibot";
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "../../server/trpc/routers/_app.ts";

/** What each admin procedure returns, as tRPC infers it from the server's routers. */
export type Outputs = inferRouterOutputs<AppRouter>;
import { type AccountResponse, accountResponseSchema, problemSchema } from "../../schema/wire.ts";
import { CliError } from "../errors.ts";
import { CLI_VERSION } from "./version.ts";

/** Long enough for a cold server on a slow link, short enough that a hung one is noticed. */
export const REQUEST_TIMEOUT_MS = 15_000;

export function timedFetch(timeoutMs = REQUEST_TIMEOUT_MS): typeof fetch {
  return Object.assign(
    function fetchWithTimeout(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
      return fetch(input, { ...init, signal: init?.signal ?? AbortSignal.timeout(timeoutMs) });
    },
    { preconnect: fetch.preconnect },
  );
}

export function trpcClient(server: string, session?: string) {
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: `${server}/trpc`,
        fetch: timedFetch(),
        headers: () => ({
          "x-service-cli-version": CLI_VERSION,
          ...(session !== undefined ? { authorization: `Bearer ${session}` } : {}),
        }),
      }),
    ],
  });
}

export type TrpcClient = ReturnType<typeof trpcClient>;

export function unreachable(server: string, cause?: unknown): CliError {
  const why =
    cause instanceof Error && cause.name === "TimeoutError" ? "it did not answer in time" : "the connection failed";
  return new CliError(`Cannot reach the health server at ${server}: ${why}`, {
    hint: "Start it with `npm run server`, or pass --server <url> (or set HEALTH_URL)",
  });
}

export interface TrpcFailure {
  /** The tRPC error code (UNAUTHORIZED, FORBIDDEN, …); undefined when no server answered. */
  code: string | undefined;
  message: string;
}

/** What a failed tRPC call says, or undefined when `error` is not a tRPC failure at all. */
export function trpcFailure(error: unknown): TrpcFailure | undefined {
  if (!(error instanceof TRPCClientError)) return undefined;
  const data: unknown = error.data;
  const code =
    typeof data === "object" && data !== null && "code" in data && typeof data.code === "string"
      ? data.code
      : undefined;
  return { code, message: error.message };
}

/**
 * Runs a tRPC call and turns its failure into a CliError. `onCode` maps a server code to a more
 * helpful error (e.g. UNAUTHORIZED with a stored session means it expired).
 */
export async function callServer<T>(
  server: string,
  call: () => Promise<T>,
  onCode: (failure: TrpcFailure) => CliError | undefined = () => undefined,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const failure = trpcFailure(error);
    if (failure === undefined) throw error;
    if (failure.code === undefined) throw unreachable(server, error instanceof TRPCClientError ? error.cause : error);
    throw onCode(failure) ?? new CliError(failure.message);
  }
}

export const sessionExpired = (): CliError => new CliError("Your session expired; run health login");

/** The `onCode` of calls made with a stored admin session: UNAUTHORIZED means it expired. */
export const sessionFailure = (failure: TrpcFailure): CliError | undefined =>
  failure.code === "UNAUTHORIZED" ? sessionExpired() : undefined;

/** The `detail` of a problem+json body, or the HTTP status when the body is something else. */
export async function problemDetail(response: Response): Promise<{ code: string | undefined; detail: string }> {
  const text = await response.text().catch(() => "");
  try {
    const parsed = v.safeParse(problemSchema, JSON.parse(text));
    if (parsed.success) return { code: parsed.output.code, detail: parsed.output.detail };
  } catch {
    // Not JSON: fall through to the status line.
  }
  return { code: undefined, detail: `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}` };
}

/** GET /cli/account with a system key or `cli:run` token. */
export async function fetchAccount(server: string, token: string): Promise<AccountResponse> {
  let response: Response;
  try {
    response = await timedFetch()(`${server}/cli/account`, {
      headers: { authorization: `Bearer ${token}`, "x-service-cli-version": CLI_VERSION },
    });
  } catch (error) {
    throw unreachable(server, error);
  }
  if (response.status === 401 || response.status === 403) {
    const { detail } = await problemDetail(response);
    throw new CliError(`The server at ${server} rejected this token: ${detail}`, {
      hint: "Use a system key or a token with scope cli:run (health tokens create --name cli --scope cli:run)",
    });
  }
  if (!response.ok) {
    const { detail } = await problemDetail(response);
    throw new CliError(`GET /cli/account failed: ${detail}`);
  }
  const parsed = v.safeParse(accountResponseSchema, await response.json().catch(() => undefined));
  if (!parsed.success)
    throw new CliError(`The server at ${server} sent an account response this CLI does not understand`);
  return parsed.output;
}
