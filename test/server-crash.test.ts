/**
 * The durability promise end to end: the real server (`server/main.ts`) as a child process,
 * runs triggered over HTTP with an API token, SIGKILL mid-run, a restart on the same database,
 * and then every accepted run completes and no step whose completion was persisted ran twice.
 */
import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { tempDir } from "./support/server.ts";
import { lineCounts } from "./support/loops.ts";
import { ADMIN, adminEnv, signIn } from "./support/trpc.ts";

const ROOT = join(import.meta.dir, "..");
const RUNS = 4;
const STEPS = 12;

interface Child {
  url: string;
  proc: ReturnType<typeof Bun.spawn>;
}

async function startChild(dir: string): Promise<Child> {
  const proc = Bun.spawn([process.execPath, "server/main.ts"], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...adminEnv,
      PORT: "0",
      HEALTH_DATABASE_URL: `file:${join(dir, "health.db")}`,
      HEALTH_SYSTEM_KEY: "crash-test-system-key-0123456789",
      HEALTH_LOOPS_DIR: join(import.meta.dir, "fixtures", "loops"),
    },
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = proc.stdout.getReader();
  let seen = "";
  const deadline = Date.now() + 15_000;
  while (!/listening on (\S+)/.test(seen)) {
    if (Date.now() > deadline) throw new Error(`server did not start: ${seen}`);
    const { value, done } = await reader.read();
    if (done) throw new Error(`server exited: ${seen}`);
    seen += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return { url: /listening on (\S+)/.exec(seen)?.[1] ?? "", proc };
}

test("SIGKILL mid-run, restart: every accepted run completes, no persisted step runs twice", async () => {
  using dir = tempDir();
  const logFile = join(dir, "steps.log");
  const first = await startChild(dir);
  let orgId = "";
  const runIds: string[] = [];
  let token = "";
  try {
    const { client } = await signIn(first.url, ADMIN);
    const created = await client.tokens.create.mutate({ name: "crash", scopes: ["loop:run:loop_logger"] });
    token = created.token;
    orgId = created.orgId;
    for (let i = 0; i < RUNS; i++) {
      const response = await fetch(`${first.url}/loop/${orgId}/loop_logger`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ logFile, tag: `run${i}`, steps: STEPS, stepDelayMs: 30 }),
      });
      expect(response.status).toBe(202);
      runIds.push((await response.json()).runId);
    }
    // Kill once some steps of the first runs are done, well before all of them are.
    const deadline = Date.now() + 15_000;
    while ([...lineCounts(logFile).values()].length < 6 && Date.now() < deadline) await Bun.sleep(5);
  } finally {
    first.proc.kill(9);
    await first.proc.exited;
  }

  const atKill = new Database(join(dir, "health.db"), { readonly: true });
  const persisted = atKill
    .query<{ runId: string; key: string }, []>("SELECT runId, key FROM run_steps WHERE status = 'complete'")
    .all();
  const unfinished = atKill.query<{ n: number }, []>("SELECT count(*) AS n FROM runs WHERE status != 'complete'").get();
  atKill.close();
  expect(unfinished?.n).toBeGreaterThan(0);

  const second = await startChild(dir);
  try {
    for (const runId of runIds) {
      let run: { status: string; output: unknown } = { status: "", output: null };
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        const response = await fetch(`${second.url}/loop/${orgId}/loop_logger/runs/${runId}`, {
          headers: { authorization: `Bearer ${token}` },
        });
        run = await response.json();
        if (["complete", "errored", "terminated"].includes(run.status)) break;
        await Bun.sleep(20);
      }
      expect(run.status).toBe("complete");
    }
  } finally {
    second.proc.kill("SIGTERM");
    await second.proc.exited;
  }

  const counts = lineCounts(logFile);
  const tagOf = new Map(runIds.map((id, i) => [id, `run${i}`]));
  for (let i = 0; i < RUNS; i++) {
    for (let s = 0; s < STEPS; s++) expect(counts.get(`run${i} step-${s}`) ?? 0).toBeGreaterThanOrEqual(1);
  }
  expect(persisted.length).toBeGreaterThan(0);
  for (const step of persisted) {
    expect({
      step: `${tagOf.get(step.runId)} ${step.key}`,
      runs: counts.get(`${tagOf.get(step.runId)} ${step.key}`),
    }).toEqual({
      step: `${tagOf.get(step.runId)} ${step.key}`,
      runs: 1,
    });
  }
}, 60_000);
