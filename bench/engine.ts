/**
 * Loop engine benchmark: durable enqueue throughput, and the overhead of one `step.do` (worker
 * round trip + two SQLite commits) measured on a loop of 1,000 trivial steps.
 *
 *   bun bench/engine.ts [--enqueue 20000] [--steps 1000] [--repeat 5]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createEngine, type Engine } from "../core/loop/engine.ts";
import { loadLoops } from "../core/loop/registry.ts";
import { openDatabase } from "../server/db.ts";

const { values } = parseArgs({
  options: {
    enqueue: { type: "string", default: "20000" },
    steps: { type: "string", default: "1000" },
    repeat: { type: "string", default: "5" },
  },
});
const enqueueCount = Number(values.enqueue);
const stepCount = Number(values.steps);
const repeat = Number(values.repeat);

const dir = mkdtempSync(join(tmpdir(), "health-bench-engine-"));
const trigger = { kind: "token" as const, id: "tok_bench", name: "bench" };

async function benchEnqueue(): Promise<void> {
  const db = openDatabase(join(dir, "enqueue.db"));
  const engine = createEngine({ sqlite: db.sqlite, loops: new Map() });
  for (let i = 0; i < 500; i++) engine.enqueue({ orgId: "org_bench", loopId: "loop_x", input: { i }, trigger });
  const body = {
    form: "new-patient-registration",
    source: "web",
    fields: { preferredContact: "email", note: "x".repeat(200) },
  };
  const started = performance.now();
  for (let i = 0; i < enqueueCount; i++)
    engine.enqueue({ orgId: "org_bench", loopId: "loop_intake", input: body, trigger });
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `enqueue: ${enqueueCount} durable inserts in ${(seconds * 1000).toFixed(0)} ms = ${Math.round(enqueueCount / seconds)} runs/s (${((seconds / enqueueCount) * 1e6).toFixed(1)} µs each; WAL, synchronous=NORMAL)`,
  );
  db.close();
}

async function waitFinished(engine: Engine, runId: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const status = engine.get("org_bench", runId)?.status;
    if (status === "complete") return;
    if (status === "errored" || status === "terminated") throw new Error(`bench run ${status}`);
    if (Date.now() > deadline) throw new Error("bench run did not finish");
    await Bun.sleep(2);
  }
}

async function timeRun(engine: Engine, steps: number): Promise<number> {
  const started = performance.now();
  const { runId } = engine.enqueue({ orgId: "org_bench", loopId: "loop_many", input: { steps }, trigger });
  await waitFinished(engine, runId);
  return performance.now() - started;
}

async function benchSteps(): Promise<void> {
  const db = openDatabase(join(dir, "steps.db"));
  const { loops } = await loadLoops(join(import.meta.dir, "..", "test", "fixtures", "loops"));
  const engine = createEngine({ sqlite: db.sqlite, loops, concurrency: 1 });
  engine.start();
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
    `step.do: ${stepCount} steps per run, median ${(median * 1000).toFixed(0)} µs per step (runs: ${perStep.map((ms) => (ms * 1000).toFixed(0)).join(", ")} µs); run start-up incl. worker ${empty.toFixed(1)} ms`,
  );
  await engine.stop();
  db.close();
}

try {
  console.log(`bun ${Bun.version}, ${navigator.hardwareConcurrency} cores`);
  await benchEnqueue();
  await benchSteps();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
