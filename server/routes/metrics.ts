/**
 * `GET /metrics`: the Prometheus text exposition of the HTTP metrics (http/metrics.ts), the loop
 * engine and the process. Gateway-wide figures, so only the system key may read them (403 for
 * any token). Engine figures are read when scraped: runs by status from the database (an index
 * range per status), in-flight runs and threads from the engine, and its counts since start.
 */
import { Elysia } from "elysia";
import { Counter, Gauge } from "prom-client";
import type { Engine } from "../../core/loop/engine.ts";
import type { HttpMetrics } from "../../http/metrics.ts";
import { auth, type BearerAuth } from "../../plugins/auth.ts";

export interface MetricsRouteDeps {
  metrics: HttpMetrics;
  engine: Engine;
  /** Who is calling: only the system key may read. */
  bearer: BearerAuth;
}

/** Keeps a prom-client counter level with a count kept elsewhere (a count that only grows). */
function mirror() {
  const reported = new Map<string, number>();
  return (counter: Counter<string>, labels: Record<string, string>, value: number): void => {
    const key = JSON.stringify(labels);
    const previous = reported.get(key) ?? 0;
    if (value <= previous) return;
    counter.inc(labels, value - previous);
    reported.set(key, value);
  };
}

export function metricsRoute(deps: MetricsRouteDeps) {
  const { registry } = deps.metrics;
  const [retried, ended, failures] = [mirror(), mirror(), mirror()];
  new Gauge({
    name: "health_runs",
    help: "Runs not yet finished, by status (queued: waiting for capacity or a limit; sleeping: a row and a timer)",
    labelNames: ["status"] as const,
    registers: [registry],
    // prom-client awaits a collect that returns a promise before it renders the registry.
    async collect() {
      // From the database, through the engine's store (either dialect): every server's runs.
      const counts = await deps.engine.unfinishedRuns();
      for (const [status, n] of Object.entries(counts)) this.set({ status }, n);
    },
  });
  new Gauge({
    name: "health_loop_runs_in_flight",
    help: "Runs executing in this server's loop threads",
    registers: [registry],
    collect() {
      this.set(deps.engine.activeCount);
    },
  });
  new Gauge({
    name: "health_loop_threads",
    help: "Loop threads alive in this server (shared and dedicated)",
    registers: [registry],
    collect() {
      this.set(deps.engine.threadCount);
    },
  });
  new Counter({
    name: "health_loop_steps_retried_total",
    help: "Step attempts that failed and were retried",
    registers: [registry],
    collect() {
      retried(this, {}, deps.engine.stats().stepsRetried);
    },
  });
  new Counter({
    name: "health_loop_runs_ended_total",
    help: "Runs this server ended, by outcome",
    labelNames: ["status"] as const,
    registers: [registry],
    collect() {
      const { runsEnded } = deps.engine.stats();
      for (const [status, value] of Object.entries(runsEnded)) ended(this, { status }, value);
    },
  });
  new Counter({
    name: "health_loop_thread_failures_total",
    help: "Loop threads replaced, by cause (blocked, memory, process-memory, crashed)",
    labelNames: ["kind"] as const,
    registers: [registry],
    collect() {
      const { threadFailures } = deps.engine.stats();
      for (const [kind, value] of Object.entries(threadFailures)) failures(this, { kind }, value);
    },
  });

  return new Elysia({ name: "health.metrics" })
    .use(auth({ ...deps.bearer, action: () => ({ kind: "metrics:read" }) }))
    .get("/metrics", async function scrape({ set }) {
      set.headers["content-type"] = registry.contentType;
      return await registry.metrics();
    });
}
