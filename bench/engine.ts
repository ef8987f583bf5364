/**
 * Loop engine benchmark: durable enqueue throughput; the overhead of one `step.do` (thread round
 * trips + SQLite commits) measured on a loop of 1,000 trivial steps; throughput of trivial runs;
 * and runs waiting on I/O side by side (500 runs whose one step waits 1 s), against the ideal of
 * all of them at once, with the engine's defaults. `--postgres` runs the same on a throwaway
 * PostgreSQL cluster (test/support/postgres.ts) on loopback instead of SQLite files.
 *
 *   bun bench/engine.ts [--enqueue 20000] [--steps 1000] [--repeat 5] [--waiting 500] [--trivial 2000] [--postgres]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { sql } from "drizzle-orm";
import { createPostgresClaims } from "../core/loop/claims-postgres.ts";
import { createClaims } from "../core/loop/claims.ts";
import { createEngine, type Engine, type EngineDatabase } from "../core/loop/engine.ts";
import { loadLoops } from "../core/loop/registry.ts";
import { openPostgres } from "../server/db-postgres.ts";
import { openDatabase } from "../server/db.ts";
import { startPostgres, type TestPostgres } from "../test/support/postgres.ts";

const { values } = parseArgs({
  options: {
    enqueue: { type: "string", default: "20000" },
    steps: { type: "string", default: "1000" },
    repeat: { type: "string", default: "5" },
    waiting: { type: "string", default: "500" },
    trivial: { type: "string", default: "2000" },
    postgres: { type: "boolean", default: false },
  },
});
let cluster: TestPostgres | undefined;

/** A fresh database of the dialect benchmarked, with what the bench reads of it directly. */
interface BenchDb {
  database: EngineDatabase;
  /** One claim pass taking one run, as the scheduler makes it. */
  claimOne(at: number): Promise<unknown>;
  /** Runs not complete yet. */
  left(): Promise<number>;
  close(): Promise<void>;
}

async function openBenchDb(name: string): Promise<BenchDb> {
  const limits = { max: 1, perOrg: 1_000_000, perLoop: () => undefined };
  if (values.postgres) {
    cluster ??= await startPostgres();
    const pg = await openPostgres(await cluster.createDatabase(name));
    const claims = createPostgresClaims(pg.orm);
    return {
      database: { postgres: pg.orm },
      claimOne: (at) => claims.claim("eng_bench", at, at + 30_000, limits),
      async left() {
        const [row] = await pg.orm.execute<{ n: number }>(
          sql`SELECT count(*)::int AS n FROM runs WHERE status <> 'complete'`,
        );
        return row?.n ?? 0;
      },
      close: () => pg.close(),
    };
  }
  const db = openDatabase(join(dir, `${name}.db`));
  // SQLite's claims measured as the SQL they run, without the promise around them.
  const claims = createClaims(db.sqlite);
  const left = db.sqlite.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM runs WHERE status != 'complete'");
  return {
    database: { sqlite: db.sqlite },
    claimOne: async (at) => claims.claim("eng_bench", at, at + 30_000, limits),
    left: async () => left.get()?.n ?? 0,
    close: async () => db.close(),
  };
}
const waitingCount = Number(values.waiting);
const trivialCount = Number(values.trivial);
const enqueueCount = Number(values.enqueue);
const stepCount = Number(values.steps);
const repeat = Number(values.repeat);

const dir = mkdtempSync(join(tmpdir(), "health-bench-engine-"));
const trigger = { kind: "token" as const, id: "tok_bench", name: "bench" };

async function benchEnqueue(): Promise<void> {
  const db = await openBenchDb("enqueue");
  const engine = createEngine({ ...db.database, loops: new Map() });
  for (let i = 0; i < 500; i++) await engine.enqueue({ orgId: "org_bench", loopId: "loop_x", input: { i }, trigger });
  const body = {
    form: "new-patient-registration",
    source: "web",
    fields: { preferredContact: "email", note: "x".repeat(200) },
  };
  const started = performance.now();
  // Awaited one by one: each run is committed before the next is queued, as before the store was async.
  for (let i = 0; i < enqueueCount; i++)
    await engine.enqueue({ orgId: "org_bench", loopId: "loop_intake", input: body, trigger });
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `enqueue: ${enqueueCount} durable inserts in ${(seconds * 1000).toFixed(0)} ms = ${Math.round(enqueueCount / seconds)} runs/s (${((seconds / enqueueCount) * 1e6).toFixed(1)} µs each; ${values.postgres ? "PostgreSQL on loopback, one at a time" : "WAL, synchronous=NORMAL"})`,
  );
  // A claim pass must not grow with the queue: it seeks the ready (organization, loop) pairs.
  const passes = 1_000;
  const claimStarted = performance.now();
  for (let i = 0; i < passes; i++) await db.claimOne(Date.now());
  const perPass = ((performance.now() - claimStarted) / passes) * 1000;
  console.log(`claim: one pass claiming one run from a queue of ${enqueueCount + 500} runs, ${perPass.toFixed(0)} µs`);
  await db.close();
}

async function waitFinished(engine: Engine, runId: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const status = (await engine.get("org_bench", runId))?.status;
    if (status === "complete") return;
    if (status === "errored" || status === "terminated") throw new Error(`bench run ${status}`);
    if (Date.now() > deadline) throw new Error("bench run did not finish");
    await Bun.sleep(2);
  }
}

async function timeRun(engine: Engine, steps: number): Promise<number> {
  const started = performance.now();
  const { runId } = await engine.enqueue({ orgId: "org_bench", loopId: "loop_many", input: { steps }, trigger });
  await waitFinished(engine, runId);
  return performance.now() - started;
}

async function benchSteps(): Promise<void> {
  const db = await openBenchDb("steps");
  const { loops } = await loadLoops(join(import.meta.dir, "..", "test", "fixtures", "loops"));
  const engine = createEngine({ ...db.database, loops, threads: 1, concurrency: 1 });
  await engine.start();
  await timeRun(engine, 10); // warm up: module cache, statements
  const perStep: number[] = [];
  for (let i = 0; i < repeat; i++) {
    // The difference between a 1,000-step and a 0-step run removes worker start-up and polling.
    const empty = await timeRun(engine, 0);
    const full = await timeRun(engine, stepCount);
    perStep.push((full - empty) / stepCount);
  }
  perStep.sort((a, b) => a - b);
  const median = perStep[Math.floor(perStep.length / 2)] ?? Number.NaN;
  const empty = await timeRun(engine, 0);
  console.log(
    `step.do: ${stepCount} steps per run, median ${(median * 1000).toFixed(0)} µs per step (runs: ${perStep.map((ms) => (ms * 1000).toFixed(0)).join(", ")} µs); a run's start-up and end ${empty.toFixed(1)} ms`,
  );
  await engine.stop();
  await db.close();
}

/** Enqueues `count` runs at once and waits for all of them; returns the wall time in ms. */
async function timeBatch(engine: Engine, db: BenchDb, loopId: string, input: unknown, count: number) {
  const started = performance.now();
  for (let i = 0; i < count; i++) await engine.enqueue({ orgId: "org_bench", loopId, input, trigger });
  const deadline = Date.now() + 300_000;
  while ((await db.left()) > 0) {
    if (Date.now() > deadline) throw new Error("bench runs did not finish");
    await Bun.sleep(5);
  }
  return performance.now() - started;
}

async function benchConcurrency(): Promise<void> {
  const { loops } = await loadLoops(join(import.meta.dir, "..", "test", "fixtures", "loops"));
  {
    const db = await openBenchDb("waiting");
    const engine = createEngine({ ...db.database, loops });
    await engine.start();
    const ms = await timeBatch(engine, db, "loop_slow", { ms: 1_000 }, waitingCount);
    console.log(
      `waiting: ${waitingCount} runs whose one step waits 1 s, all done in ${(ms / 1000).toFixed(2)} s = ${(ms / 1000).toFixed(2)}× the ideal (every run at once), ${engine.threadCount} loop threads, default limits`,
    );
    await engine.stop();
    await db.close();
  }
  {
    const db = await openBenchDb("trivial");
    const engine = createEngine({ ...db.database, loops });
    await engine.start();
    await timeBatch(engine, db, "loop_echo", { warm: true }, 50);
    const ms = await timeBatch(engine, db, "loop_echo", { n: 1 }, trivialCount);
    console.log(
      `trivial: ${trivialCount} runs of four trivial steps in ${(ms / 1000).toFixed(2)} s = ${Math.round(trivialCount / (ms / 1000))} runs/s (${engine.threadCount} loop threads)`,
    );
    await engine.stop();
    await db.close();
  }
}

try {
  console.log(
    `bun ${Bun.version}, ${navigator.hardwareConcurrency} cores, ${values.postgres ? "PostgreSQL" : "SQLite"}`,
  );
  await benchEnqueue();
  await benchSteps();
  await benchConcurrency();
} finally {
  rmSync(dir, { recursive: true, force: true });
  await cluster?.[Symbol.asyncDispose]();
}
