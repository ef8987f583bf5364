/**
 * auth: resolves the bearer into a Principal before validation runs, so an unauthenticated
 * caller learns nothing about the request schema. The decision of what a principal may do is
 * `authorize()`'s; this plugin only asks it.
 */
import { Elysia } from "elysia";
import { type Action, authorize, type Principal } from "../core/authz.ts";
import { forbidden, HttpProblem, unauthorized } from "../http/problem.ts";
import { context, instanceSeed, type RequestState } from "../http/context.ts";
import { COMPANY_PATTERN } from "../schema/ids.ts";

/**
 * Maps a raw bearer to its principal, or null for unknown, malformed or revoked tokens: at once
 * over a store that answers at once (SQLite), with a promise over one that does not (PostgreSQL).
 * `async` says which, so the plugin picks its hooks when it is built: Elysia awaits a hook only
 * when it is an async function, and every await costs a request a turn (docs/stack.md).
 */
export type BearerAuth =
  | { async?: false; authenticate: (bearer: string) => Principal | null }
  | { async: true; authenticate: (bearer: string) => Promise<Principal | null> };

export type AuthOptions = BearerAuth & {
  /** The action the routes behind this plugin perform, given the request's path params. */
  action: (params: Record<string, string>) => Action;
};

/**
 * Who a call is attributed and rate-limited to (docs/interface.md §5.2): the token's organization slug; for the
 * system key, a valid `X-Service-Company` header, else the key itself (`system`).
 */
export function companyOf(principal: Principal, header: string | null): string {
  if (principal.kind === "token") return principal.orgSlug;
  if (header === null) return principal.id;
  const slug = header.trim().toLowerCase();
  if (!COMPANY_PATTERN.test(slug)) {
    throw new HttpProblem("invalid_request", "X-Service-Company must be a slug of letters, digits and dashes", {
      errors: [{ path: "headers.x-service-company", message: `must match ${COMPANY_PATTERN.source}` }],
    });
  }
  return slug;
}

export function bearerOf(header: string | null): string | null {
  if (header === null) return null;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

export const auth = (options: AuthOptions) => {
  /** The bearer of the request, or 401. Headers are read from the request: asking Elysia for `headers` copies them all. */
  function bearerOfRequest(request: Request): string {
    const bearer = bearerOf(request.headers.get("authorization"));
    if (bearer === null) throw unauthorized("Send Authorization: Bearer <token>");
    return bearer;
  }

  function admit(principal: Principal | null, state: RequestState): Principal {
    if (principal === null) throw unauthorized("The token is unknown, malformed or revoked");
    state.principal = principal;
    return principal;
  }

  /** What the principal may do depends on the route's params (organization, loop): 403 here. */
  function decide(principal: Principal, request: Request, params: unknown, state: RequestState): void {
    const verdict = authorize(principal, options.action(params as Record<string, string>));
    if (!verdict.ok) throw forbidden(verdict.reason);
    state.company = companyOf(principal, request.headers.get("x-service-company"));
  }

  const plugin = new Elysia({ name: "health.auth", seed: instanceSeed() }).use(context);
  // Who is calling, or 401. Runs first: in the parse phase for requests with a body (before the
  // route's parser, so an anonymous caller gets 401, never 400, 413 or 415, and costs no parsing),
  // else at the start of the derive. The parse hook returns nothing, so the route's parser runs next.
  if (options.async !== true) {
    const authenticate = options.authenticate;
    function identify(request: Request, state: RequestState): Principal {
      if (state.principal !== undefined) return state.principal;
      const started = performance.now();
      try {
        return admit(authenticate(bearerOfRequest(request)), state);
      } finally {
        state.record("auth", performance.now() - started);
      }
    }
    return plugin
      .onParse({ as: "scoped" }, function identifyBeforeParsing({ request, state }) {
        identify(request, state);
      })
      .derive({ as: "scoped" }, function authorizeCaller({ request, params, state }) {
        decide(identify(request, state), request, params, state);
        return {};
      });
  }
  // A lookup that is a round trip (PostgreSQL): the same steps, in hooks Elysia awaits.
  const authenticate = options.authenticate;
  async function identifyAsync(request: Request, state: RequestState): Promise<Principal> {
    if (state.principal !== undefined) return state.principal;
    const started = performance.now();
    try {
      return admit(await authenticate(bearerOfRequest(request)), state);
    } finally {
      state.record("auth", performance.now() - started);
    }
  }
  return plugin
    .onParse({ as: "scoped" }, async function identifyBeforeParsingAsync({ request, state }) {
      await identifyAsync(request, state);
    })
    .derive({ as: "scoped" }, async function authorizeCallerAsync({ request, params, state }) {
      decide(await identifyAsync(request, state), request, params, state);
      return {};
    });
};
