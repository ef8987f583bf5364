/**
 * Several gateway instances on one database and one Redis, against one instance: planning cache
 * hits and durable triggers per second with 1, 2 and 3 instances, each instance driven by its own
 * wrk with an equal share of the connections, next to a single instance without Redis (the
 * embedded default). The database is one SQLite file, then one PostgreSQL (a throwaway cluster on
 * loopback, test/support/postgres.ts; skipped, saying so, without Debian's postgresql). On a
 * 2-core machine the instances, the wrk processes, redis-server and PostgreSQL share the same
 * cores, so the total cannot grow much: the point is that it stays correct and does not fall.
 * Needs `wrk` and `redis-server`.
 *
 *   bun bench/instances.ts [--duration 3] [--connections 32] [--rounds 3]
 *   BENCH_DATABASES=postgres bun bench/instances.ts      only the PostgreSQL rows (or sqlite)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  benchOptions,
  requestScript,
  startTarget,
  type Target,
  type WrkResult,
  wrk,
  BENCH_SYSTEM_KEY,
  PLANNING_BODY,
  PLANNING_HEADERS,
} from "./wrk.ts";
import { hasPostgres, startPostgres, type TestPostgres } from "../test/support/postgres.ts";

const options = benchOptions();
const planBody = PLANNING_BODY;
const planHeaders = PLANNING_HEADERS;
let companies = 0;
/**
 * A planning script under a company of its own, its cache entry warmed on every instance. With
 * Redis the rate-limit counts are shared by every setup of this run, and the machine can exceed the
 * highest per-minute limit the server accepts (1,000,000) within a minute: each round counts afresh.
 */
async function planRound(targets: Target[]): Promise<Array<{ url: string; script: string }>> {
  const headers = { ...planHeaders, "X-Service-Company": `bench-${++companies}` };
  const script = requestScript(`instances-plan-${companies}`, { method: "POST", body: planBody, headers });
  for (const t of targets) {
    const warm = await fetch(`${t.url}/cli/code/sessions`, { method: "POST", headers, body: planBody });
    if (warm.status !== 200) throw new Error(`planning answered ${warm.status} on ${t.url}`);
  }
  return targets.map((t) => ({ url: `${t.url}/cli/code/sessions`, script }));
}

const redisServer = Bun.which("redis-server");
if (redisServer === null) throw new Error("redis-server is needed: apt-get install redis-server");

async function startRedis(): Promise<{ url: string; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "health-bench-redis-"));
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const proc = Bun.spawn(
    [redisServer as string, "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { cwd: dir, stdout: "ignore", stderr: "ignore" },
  );
  for (let i = 0; i < 100; i++) {
    try {
      const socket = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } });
      socket.end();
      break;
    } catch {
      await Bun.sleep(50);
    }
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      proc.kill();
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * n instances on one database (a fresh SQLite folder, or `databaseUrl`) and Redis when given,
 * started one after another.
 */
async function startInstances(n: number, redisUrl: string | undefined, databaseUrl?: string): Promise<Target[]> {
  const dbDir = mkdtempSync(join(tmpdir(), "health-bench-shared-"));
  const env: Record<string, string> = {
    BENCH_DB_DIR: dbDir,
    ...(databaseUrl === undefined ? {} : { BENCH_DATABASE_URL: databaseUrl }),
    HEALTH_SYSTEM_KEY: BENCH_SYSTEM_KEY,
    BENCH_LOOPS_DIR: join(import.meta.dir, "loops"),
    ...(redisUrl === undefined ? {} : { HEALTH_REDIS_URL: redisUrl }),
  };
  const targets: Target[] = [];
  for (let i = 0; i < n; i++) targets.push(await startTarget(["bench/targets.ts", "gateway"], env));
  return targets;
}

/** Every instance driven at once, each with its share of the connections; the totals. */
async function drive(urls: Array<{ url: string; script: string }>): Promise<WrkResult> {
  const connections = Math.max(2, Math.round(options.connections / urls.length));
  const results = await Promise.all(
    urls.map(({ url, script }) => wrk(url, { duration: options.duration, connections, script })),
  );
  return {
    requestsPerSecond: results.reduce((sum, r) => sum + r.requestsPerSecond, 0),
    p50Ms: Math.max(...results.map((r) => r.p50Ms)),
    p99Ms: Math.max(...results.map((r) => r.p99Ms)),
    non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function measure(
  label: string,
  n: number,
  redisUrl: string | undefined,
  databaseUrl?: string,
): Promise<string[]> {
  const targets = await startInstances(n, redisUrl, databaseUrl);
  try {
    const { loop = "", orgId = "" } = targets[0]?.details ?? {};
    const triggerScript = requestScript(`instances-trigger-${n}`, {
      method: "POST",
      body: JSON.stringify({ form: "registration" }),
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${loop}` },
    });
    const triggers = targets.map((t) => ({ url: `${t.url}/loop/${orgId}/loop_noop`, script: triggerScript }));
    await drive(await planRound(targets));
    const planRuns: WrkResult[] = [];
    const triggerRuns: WrkResult[] = [];
    for (let round = 0; round < options.rounds; round++) {
      planRuns.push(await drive(await planRound(targets)));
      triggerRuns.push(await drive(triggers));
    }
    const row = (what: string, runs: WrkResult[]) =>
      `| ${label} | ${what} | ${Math.round(median(runs.map((r) => r.requestsPerSecond))).toLocaleString("en-US")} | ${median(runs.map((r) => r.p99Ms)).toFixed(2)} | ${runs.reduce((s, r) => s + r.non2xx, 0)} |`;
    return [row("planning cache hits", planRuns), row("durable triggers (202)", triggerRuns)];
  } finally {
    for (const t of targets) await t[Symbol.asyncDispose]();
  }
}

const databases = new Set((process.env.BENCH_DATABASES ?? "sqlite,postgres").split(","));
const redis = await startRedis();
let pg: TestPostgres | undefined;
try {
  console.log(
    `instances: wrk -t1, ${options.connections} connections split over the instances, ${options.duration} s, median of ${options.rounds} rounds, ${navigator.hardwareConcurrency} cores`,
  );
  console.log("| setup | path | req/s (all instances) | worst p99 ms | non-2xx |");
  console.log("|---|---|---|---|---|");
  for (const line of databases.has("sqlite") ? await measure("1 instance, SQLite only", 1, undefined) : []) {
    console.log(line);
  }
  for (const n of databases.has("sqlite") ? [1, 2, 3] : []) {
    for (const line of await measure(`${n} instance${n > 1 ? "s" : ""}, one SQLite file + Redis`, n, redis.url)) {
      console.log(line);
    }
  }
  if (!hasPostgres) console.log("(PostgreSQL rows skipped: Debian's postgresql is not installed)");
  for (const n of hasPostgres && databases.has("postgres") ? [1, 2, 3] : []) {
    pg ??= await startPostgres();
    const label = `${n} instance${n > 1 ? "s" : ""}, one PostgreSQL + Redis`;
    for (const line of await measure(label, n, redis.url, await pg.createDatabase())) console.log(line);
  }
} finally {
  await redis.stop();
  await pg?.[Symbol.asyncDispose]();
}
