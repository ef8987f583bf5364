/**
 * Start-up: open and migrate the database, create the default organization and system key,
 * build the stores and the upstream, compose the app and listen. Returns a handle that stops
 * everything and flushes what was written behind.
 */
import { createEngine, type EngineLogger } from "../core/loop/engine.ts";
import { loadLoops } from "../core/loop/registry.ts";
import { AuditLog } from "../plugins/planning/audit-log.ts";
import { defaultOrgCatalog } from "./services/loop-catalog.ts";
import { Authenticator } from "./services/authenticator.ts";
import { startUp } from "./bootstrap.ts";
import type { Config } from "./config.ts";
import { resolve } from "node:path";
import { openServerDatabase } from "./database.ts";
import { createApp } from "./app.ts";
import { embeddedUpstream, openAiUpstream, type Upstream } from "../plugins/planning/upstream.ts";
import { UsageRecorder } from "./services/usage.ts";
import { createRetention } from "./services/retention.ts";
import { createStores, redisLocation } from "./stores.ts";

/** The port is taken (by another health server, most likely) or cannot be bound. */
export class ListenError extends Error {
  constructor(host: string, port: number, cause: unknown) {
    const inUse =
      cause instanceof Error &&
      /EADDRINUSE|in use/i.test(`${cause.message} ${(cause as { code?: string }).code ?? ""}`);
    super(
      inUse
        ? `port ${port} on ${host} is already in use (another health server?). Stop it, or start this one with PORT=<another port>.`
        : `cannot listen on ${host}:${port}: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
    this.name = "ListenError";
  }
}

export interface StartOptions {
  /** Where start-up messages go (the generated system key among them). */
  log?: (message: string) => void;
  /** How often written-behind state (audit rows, daily counts, lastUsedAt) is flushed. */
  flushIntervalMs?: number;
  /** How long finished spans wait to be sent in a batch (tracing on). Default 1 s. */
  traceExportDelayMs?: number;
}

export interface RunningServer {
  url: string;
  port: number;
  defaultOrg: { id: string; slug: string };
  /** Flushes, and waits until the audit writer has committed every row. */
  drain(): Promise<void>;
  /** Set only when this start generated the system key. */
  generatedSystemKey?: string;
  /** Set only when this start created a one-time admin setup code. */
  setupCode?: string;
  flush(): void;
  stop(): Promise<void>;
}

/** Engine events carry ids and statuses, never a run's input or output. */
function engineLogger(log: (message: string) => void): EngineLogger {
  const line = (level: string, message: string, fields?: Record<string, unknown>) =>
    log(`[loops] ${level} ${message}${fields ? ` ${JSON.stringify(fields)}` : ""}`);
  return {
    info: () => {},
    warn: (message, fields) => line("warn", message, fields),
    error: (message, fields) => line("error", message, fields),
  };
}

export function createUpstream(config: Config): Upstream {
  if (config.HEALTH_UPSTREAM_URL === undefined) return embeddedUpstream();
  return openAiUpstream({
    baseUrl: config.HEALTH_UPSTREAM_URL,
    apiKey: config.HEALTH_UPSTREAM_API_KEY,
    model: config.HEALTH_UPSTREAM_MODEL,
    timeoutMs: config.HEALTH_UPSTREAM_TIMEOUT_MS,
    retries: config.HEALTH_UPSTREAM_RETRIES,
  });
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const log = options.log ?? ((message: string) => console.log(message));
  const database = await openServerDatabase(config.HEALTH_DATABASE_URL);
  const admin =
    config.HEALTH_ADMIN_EMAIL !== undefined && config.HEALTH_ADMIN_PASSWORD !== undefined
      ? { email: config.HEALTH_ADMIN_EMAIL, password: config.HEALTH_ADMIN_PASSWORD }
      : undefined;
  const { accounts, tokens } = database;
  const { defaultOrg, systemKey, bootstrap } = await startUp(database.startup, accounts, {
    systemKey: config.HEALTH_SYSTEM_KEY,
    admin,
  });

  const authenticator = new Authenticator({ tokens, systemKeyHash: systemKey.hash, defaultOrg });
  const stores = createStores(config, { dayCounts: database.dayCounts, idempotency: database.idempotency });
  await stores.ready();
  const rateLimits = stores.rateLimits;
  const writeBehind = database.writeBehind(log);
  const audit = new AuditLog(writeBehind.audit);
  const loaded = await loadLoops(resolve(config.HEALTH_LOOPS_DIR));
  for (const problem of loaded.errors) {
    log(`Loop module ${problem.file} skipped: ${problem.message}${problem.location ? ` at ${problem.location}` : ""}`);
  }
  const catalog = defaultOrgCatalog(defaultOrg.id, loaded.loops, loaded.errors);
  const usage = new UsageRecorder(writeBehind.usage);
  // The OpenTelemetry SDK is loaded only when traces are on: off, it costs nothing, start-up included.
  const traceEndpoint =
    config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (config.OTEL_EXPORTER_OTLP_ENDPOINT === undefined
      ? undefined
      : `${config.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, "")}/v1/traces`);
  const tracing =
    traceEndpoint === undefined
      ? null
      : (await import("./services/tracing.ts")).createTracing({
          endpoint: traceEndpoint,
          serviceName: config.OTEL_SERVICE_NAME,
          // A finished run's attempts are read through the engine's store.
          runs: database.runs,
          ...(options.traceExportDelayMs === undefined ? {} : { exportDelayMs: options.traceExportDelayMs }),
        });
  const tokenOf = (trigger: { kind: string; id: string }) => (trigger.kind === "token" ? trigger.id : "");
  const engine = createEngine({
    store: database.runs,
    claims: database.claims,
    loops: catalog.all,
    ...(config.HEALTH_LOOP_THREADS === undefined ? {} : { threads: config.HEALTH_LOOP_THREADS }),
    concurrency: config.HEALTH_LOOP_CONCURRENCY,
    orgConcurrency: config.HEALTH_LOOP_ORG_CONCURRENCY,
    blockedMs: config.HEALTH_LOOP_BLOCKED_MS,
    logger: engineLogger(log),
    onRunQueued: (run) => usage.runQueued({ orgId: run.orgId, loopId: run.loopId, tokenId: tokenOf(run.trigger) }),
    onRunEnded: (run) => {
      tracing?.runEnded(run);
      usage.runEnded({
        orgId: run.orgId,
        loopId: run.loopId,
        tokenId: tokenOf({ kind: run.trigger.triggerKind, id: run.trigger.triggerId }),
        status: run.status,
        durationMs: run.durationMs,
      });
    },
  });
  const app = createApp({
    authenticator,
    tokens,
    accounts,
    deviceLogins: database.deviceLogins,
    adminAudit: database.adminAudit,
    rateLimits,
    idempotency: database.idempotency,
    triggers: database.triggers,
    planningIdempotency: stores.planningIdempotency,
    planCache: stores.planCache,
    cacheTtlMs: config.HEALTH_CACHE_TTL_SECONDS * 1000,
    upstream: createUpstream(config),
    audit,
    database: database.probe,
    usageReader: database.usageReader,
    defaultOrg,
    loginLimiter: stores.loginLimiter,
    deviceStartLimiter: stores.deviceStartLimiter,
    engine,
    catalog,
    usage,
    tracing,
    redis: stores.redis,
  });

  const flush = () => {
    audit.flush();
    rateLimits.flush();
    // A failed batch is kept for the next flush.
    authenticator.flush().catch((error: unknown) => log(`lastUsedAt flush failed: ${(error as Error).message}`));
    usage.flush();
  };
  // Listen before the engine claims any run: a server that cannot listen must not take work.
  // Elysia asks Bun for SO_REUSEPORT by default, which lets a second server share the port and
  // split the requests with the first; one port is one server here.
  try {
    app.listen({ port: config.PORT, hostname: config.HOST, reusePort: false });
  } catch (error) {
    await engine.stop();
    await audit.close();
    stores.redis?.close();
    await tracing?.shutdown();
    await database.close();
    throw new ListenError(config.HOST, config.PORT, error);
  }
  const server = app.server;
  if (server === null) throw new Error("the server did not start");
  const flusher = setInterval(flush, options.flushIntervalMs ?? 500);
  await engine.start();
  const retention = createRetention({
    store: database.retention,
    auditDays: config.HEALTH_AUDIT_RETENTION_DAYS,
    runDays: config.HEALTH_RUN_RETENTION_DAYS,
    usageDays: config.HEALTH_USAGE_RETENTION_DAYS,
    log,
  });
  retention.start();
  const port = server.port ?? config.PORT;
  const url = `http://${config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST}:${port}`;

  if (systemKey.generated !== undefined) {
    log(`System key (shown once; store it now, e.g. \`health login --token <key>\`):\n  ${systemKey.generated}`);
  }
  if (bootstrap.createdAdmin !== undefined) log(`Created admin ${bootstrap.createdAdmin}`);
  if (bootstrap.setupCode !== undefined) {
    log(
      `No admin yet. One-time setup code: ${bootstrap.setupCode}\n  Create the first admin at ${url}/admin or with \`health setup --code <code> --email <email> --password-stdin\``,
    );
  }
  if (bootstrap.setupCodeElsewhere) {
    log(
      "No admin yet. Another instance made the one-time setup code less than a minute ago: use the code it printed, or restart this one after a minute for a new code",
    );
  }
  if (stores.redis !== undefined && config.HEALTH_REDIS_URL !== undefined) {
    const where = redisLocation(config.HEALTH_REDIS_URL);
    log(
      (await stores.redis.ping())
        ? `Shared state: Redis at ${where}`
        : `Shared state: Redis at ${where} does not answer yet; planning, sign-in and device-link starts answer 503 until it does`,
    );
  }
  log(`Database: ${database.location}`);
  log(
    `Loops: ${loaded.loops.size === 0 ? "none" : [...loaded.loops.keys()].join(", ")} (from ${config.HEALTH_LOOPS_DIR})`,
  );
  log(`health listening on ${url}`);
  log(`Console: ${url}/admin`);

  let stopped = false;
  return {
    url,
    port,
    defaultOrg,
    generatedSystemKey: systemKey.generated,
    setupCode: bootstrap.setupCode,
    flush,
    async drain() {
      flush();
      await audit.drain();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(flusher);
      await app.stop();
      await retention.stop();
      await engine.stop();
      flush();
      await stores.settled();
      await audit.close();
      stores.redis?.close();
      await tracing?.shutdown();
      await database.close();
    },
  };
}
