/**
 * The app, composed in one place. Read top to bottom: the order of `.use()` is the order the
 * plugins see a request. Planning: auth → rate-limit → idempotency → safety-gate → cache →
 * planning → sanitizer. Trigger: auth → idempotency → the durable enqueue.
 */
import { Elysia } from "elysia";
import { auth, type BearerAuth } from "../plugins/auth.ts";
import { cache } from "../plugins/cache/index.ts";
import { context, type RequestState } from "../http/context.ts";
import { idempotency } from "../plugins/idempotency/index.ts";
import { planning } from "../plugins/planning/index.ts";
import { rateLimit } from "../plugins/rate-limit/index.ts";
import { safetyGate } from "../plugins/safety-gate.ts";
import { sanitizer } from "../plugins/sanitizer.ts";
import { type AccountResponse, planningRequestSchema } from "../schema/wire.ts";
import { adminConsole } from "./routes/console.ts";
import type { AuditLog } from "../plugins/planning/audit-log.ts";
import type { TokenStore } from "./services/tokens.ts";
import { jsonBody } from "../http/body.ts";
import type { CacheStore } from "../plugins/cache/store.ts";
import { errorHandler } from "../http/errors.ts";
import type { IdempotencyStore } from "../plugins/idempotency/store.ts";
import { openApiDocument } from "./routes/openapi.ts";
import type { PlanResult } from "../http/plan-result.ts";
import type { RateLimitStore, WindowState } from "../plugins/rate-limit/store.ts";
import type { Engine } from "../core/loop/engine.ts";
import type { LoopCatalog } from "./services/loop-catalog.ts";
import { loopRoutes } from "./routes/loops.ts";
import type { AccountStore, LoginLimiter } from "./services/accounts.ts";
import type { AdminAudit } from "./services/admin-audit.ts";
import type { DeviceLoginStore, DeviceStartLimiter } from "./services/device-logins.ts";
import { trpcHandler } from "./trpc/handler.ts";
import type { Upstream } from "../plugins/planning/upstream.ts";
import { SERVER_VERSION } from "./version.ts";
import { createHttpMetrics, type HttpMetrics } from "../http/metrics.ts";
import { metricsRoute } from "./routes/metrics.ts";
import { REDIS_RETRY_AFTER_SECONDS, type RedisConnection, RedisUnavailableError } from "../core/redis.ts";
import { unavailable } from "../http/problem.ts";
import { type DatabaseProbe, healthRoutes } from "./routes/health.ts";
import type { Tracing } from "./services/tracing.ts";
import type { UsageReader, UsageRecorder } from "./services/usage.ts";
import type { TriggerStore } from "./routes/triggers.ts";

export interface AppDeps {
  /**
   * Bearers to principals (server/services/authenticator.ts): synchronous over SQLite, so the auth
   * hooks stay synchronous; over PostgreSQL a promise, and the hooks are async.
   */
  authenticator: { readonly bearer: BearerAuth };
  /** API tokens, for the admin API. */
  tokens: TokenStore;
  /** Users, sessions and the first admin: the session of every console and CLI admin request. */
  accounts: AccountStore;
  deviceLogins: DeviceLoginStore;
  adminAudit: AdminAudit;
  rateLimits: RateLimitStore;
  /** Trigger Idempotency-Keys: in the database, in the run's transaction (server/routes/loops.ts). */
  idempotency: IdempotencyStore;
  /** Where triggers commit, in the database of `idempotency` (routes/triggers.ts, server/database.ts). */
  triggers: TriggerStore;
  /** Planning Idempotency-Keys: the same database store, or Redis when configured. */
  planningIdempotency: IdempotencyStore;
  planCache: CacheStore<PlanResult>;
  cacheTtlMs: number;
  upstream: Upstream;
  audit: AuditLog;
  /** `SELECT 1` for /readyz and /healthz: `sqliteProbe` or `postgresProbe` (server/routes/health.ts). */
  database: DatabaseProbe;
  /** Reads the usage rollups: `createUsageReader` or `postgresUsageReader`. */
  usageReader: UsageReader;
  defaultOrg: { id: string; slug: string };
  loginLimiter: LoginLimiter;
  deviceStartLimiter: DeviceStartLimiter;
  engine: Engine;
  catalog: LoopCatalog;
  /** Per-minute usage rollups; planning calls are added as they are answered. */
  usage: UsageRecorder;
  /** OpenTelemetry traces, or null when they are off. */
  tracing: Tracing | null;
  /** The shared Redis, when HEALTH_REDIS_URL is set (for /readyz). */
  redis?: RedisConnection | undefined;
}

export const PLANNING_BODY_LIMIT = 64 * 1024;
/** The planning chain's plugins as they appear in Server-Timing. */
export const PLANNING_CHAIN = [
  "auth",
  "rate-limit",
  "idempotency",
  "safety-gate",
  "cache",
  "planning",
  "sanitizer",
] as const;

/** The budget left, for /cli/account; a shared store that cannot answer makes it a 503. */
async function peekRateLimit(store: RateLimitStore, company: string) {
  try {
    return await store.peek(company, Date.now());
  } catch (error) {
    if (!(error instanceof RedisUnavailableError)) throw error;
    throw unavailable("The rate limiter cannot reach its store; retry shortly", REDIS_RETRY_AFTER_SECONDS);
  }
}

function cliRoutes(deps: AppDeps) {
  return (
    new Elysia({ prefix: "/cli" })
      .use(auth({ ...deps.authenticator.bearer, action: () => ({ kind: "cli:run" }) }))
      .get("/account", async function account({ state, headers }): Promise<AccountResponse> {
        const company = state.company ?? "";
        const limits = await peekRateLimit(deps.rateLimits, company);
        const budget = (w: WindowState) => ({ limit: w.limit, remaining: w.remaining, reset_seconds: w.resetSeconds });
        return {
          company,
          token_name: state.principal?.name ?? "",
          scopes: [...(state.principal?.scopes ?? [])],
          cli_version: headers["x-service-cli-version"] ?? null,
          server_version: SERVER_VERSION,
          rate_limit: { minute: budget(limits.minute), day: budget(limits.day) },
        };
      })
      .onTransform(function declarePlanningChain({ state }) {
        state.chain = PLANNING_CHAIN;
      })
      .use(rateLimit({ store: deps.rateLimits }))
      .use(idempotency({ store: deps.planningIdempotency, replayHeaders: ["x-health-cache"] }))
      .use(safetyGate())
      .use(cache({ store: deps.planCache, ttlMs: deps.cacheTtlMs, model: deps.upstream.model }))
      .use(planning({ upstream: deps.upstream, audit: deps.audit }))
      .use(sanitizer())
      // async on purpose: Elysia awaits a handler's promise only when it recognises the handler as async.
      .post("/code/sessions", async ({ body, state, callUpstream }) => callUpstream(body, state), {
        body: planningRequestSchema,
        parse: jsonBody(PLANNING_BODY_LIMIT),
      })
  );
}

function observer(
  metrics: HttpMetrics,
  usage: UsageRecorder,
  tracing: Tracing | null,
): NonNullable<RequestState["done"]> {
  return (state, route, status, problem) => {
    metrics.observe(state, route, status, problem);
    tracing?.endRequest(state, route, status, problem);
    const { principal, company } = state;
    if (principal === undefined || company === undefined || !state.chain.includes("planning")) return;
    usage.observePlanning({
      orgId: principal.orgId,
      company,
      tokenId: principal.kind === "token" ? principal.id : "",
      status,
      problem,
      cache: state.cache,
      clinical: state.intent === "clinical_blocked",
      totalMs: performance.now() - state.startedAt,
      upstreamMs: state.upstreamLatencyMs,
    });
  };
}

export function createApp(deps: AppDeps) {
  const trpc = trpcHandler(deps);
  // The Bun server exists once listening; tRPC asks it for the client address (login limits).
  let server: { requestIP(request: Request): { address: string } | null } | null = null;
  const metrics = createHttpMetrics();
  const app = new Elysia({ name: "health.app" })
    .use(errorHandler)
    .use(context)
    // Every request is counted once, as it is answered (see http/metrics.ts), and planning calls
    // are added to the usage rollup (server/services/usage.ts).
    .decorate("observeRequest", observer(metrics, deps.usage, deps.tracing))
    .decorate("startSpan", deps.tracing?.startRequest)
    .use(healthRoutes({ database: deps.database, redis: deps.redis }))
    // A person who opens the server's address in a browser wants the console.
    .get("/", function toConsole({ redirect }) {
      return redirect("/admin", 302);
    })
    .get("/openapi.json", () => openApiDocument())
    .use(adminConsole())
    .mount("/trpc", (request: Request) => trpc(request, server?.requestIP(request)?.address ?? "unknown"))
    .use(cliRoutes(deps))
    .use(
      loopRoutes({
        bearer: deps.authenticator.bearer,
        idempotency: deps.idempotency,
        triggers: deps.triggers,
        engine: deps.engine,
        catalog: deps.catalog,
      }),
    )
    .use(
      metricsRoute({
        metrics,
        engine: deps.engine,
        bearer: deps.authenticator.bearer,
      }),
    )
    .onStart(function rememberServer(instance) {
      server = instance.server;
    });
  return app;
}

export type App = ReturnType<typeof createApp>;
