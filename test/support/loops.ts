/** Helpers of the loop test suites: temporary databases, and waiting on a condition, never a clock. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  createEngine,
  type Engine,
  type EngineSettings,
  type RunRecord,
  type RunStatus,
} from "../../core/loop/engine.ts";
import { type LoopDefinition, loadLoops } from "../../core/loop/registry.ts";
import { openDatabase } from "../../server/db.ts";
import { tempDir } from "./temp-dir.ts";

export { tempDir };

export const FIXTURE_LOOPS_DIR = join(import.meta.dir, "..", "fixtures", "loops");
export const ORG = "org_test";
export const TRIGGER = { kind: "token" as const, id: "tok_test", name: "test token" };
export const FINISHED: readonly RunStatus[] = ["complete", "errored", "terminated"];

let fixtureLoops: Map<string, LoopDefinition> | undefined;

export async function loadFixtureLoops(): Promise<Map<string, LoopDefinition>> {
  if (fixtureLoops === undefined) {
    const loaded = await loadLoops(FIXTURE_LOOPS_DIR);
    if (loaded.errors.length > 0) throw new Error(`fixture loops failed to load: ${JSON.stringify(loaded.errors)}`);
    fixtureLoops = loaded.loops;
  }
  return fixtureLoops;
}

/** Polls `probe` until it returns (or resolves to) a value other than undefined, or fails after `timeoutMs`. */
export async function waitFor<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  what: string,
  timeoutMs = 5_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(10);
  }
}

export function waitForStatus(
  engine: Pick<Engine, "get">,
  runId: string,
  statuses: readonly RunStatus[] = FINISHED,
  timeoutMs = 5_000,
): Promise<RunRecord> {
  return waitFor(
    async () => {
      const run = await engine.get(ORG, runId);
      return run !== null && statuses.includes(run.status) ? run : undefined;
    },
    `run ${runId} to be ${statuses.join("|")}`,
    timeoutMs,
  );
}

export interface TestEngine extends AsyncDisposable {
  engine: Engine;
  db: ReturnType<typeof openDatabase>;
  dir: string;
}

/** An engine on a fresh database file, with the fixture loops; stopped and deleted on dispose. */
export async function testEngine(options: Partial<EngineSettings> = {}): Promise<TestEngine> {
  const dir = tempDir("health-loop-");
  const db = openDatabase(join(dir, "health.db"));
  const engine = createEngine({ sqlite: db.sqlite, loops: await loadFixtureLoops(), pollMs: 50, ...options });
  return {
    engine,
    db,
    dir,
    async [Symbol.asyncDispose]() {
      await engine.stop();
      db.close();
      dir[Symbol.dispose]();
    },
  };
}

/** The non-empty lines of a log file a fixture loop appends to; none while it does not exist. */
export function logLines(file: string): string[] {
  try {
    return readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line !== "");
  } catch {
    return [];
  }
}

/** How many times each line occurs in `file` (steps log one line per execution); empty if absent. */
export function lineCounts(file: string): Map<string, number> {
  const counts = new Map<string, number>();
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return counts;
  }
  for (const line of text.split("\n")) if (line !== "") counts.set(line, (counts.get(line) ?? 0) + 1);
  return counts;
}

/**
 * An engine in a process of its own (support/engine-process.ts) on the database at `location` (an
 * SQLite file or a postgres:// URL), once it says it is ready; `owner` is its engine id.
 */
export async function startEngineProcess(
  location: string,
  options: object,
): Promise<{ proc: Bun.Subprocess; owner: string }> {
  const proc = Bun.spawn(
    [process.execPath, join(import.meta.dir, "engine-process.ts"), location, JSON.stringify(options)],
    {
      stdout: "pipe",
      stderr: "inherit",
    },
  );
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  let seen = "";
  while (!/ready (\S+)\n/.test(seen)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the engine process exited: ${seen}`);
    seen += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return { proc, owner: /ready (\S+)\n/.exec(seen)?.[1] ?? "" };
}
