/**
 * One queue, several processes: two real engine processes on one SQLite file. Limits hold across
 * them, each run executes in one place at a time, and when one process is killed (kill -9) the
 * other takes its runs over once their leases expire.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { createEngine } from "../core/loop/engine.ts";
import { openDatabase } from "../server/db.ts";
import { loadFixtureLoops, logLines, ORG, startEngineProcess, TRIGGER, tempDir, waitFor } from "./support/loops.ts";

test("two processes share one queue; a killed one's runs are taken over; the org limit holds across both", async () => {
  using dir = tempDir("health-shared-");
  const dbPath = join(dir, "health.db");
  const logFile = join(dir, "steps.log");
  const db = openDatabase(dbPath);
  // Enqueues only: this engine is never started.
  const client = createEngine({ sqlite: db.sqlite, loops: await loadFixtureLoops() });
  const options = { leaseMs: 1_500, heartbeatMs: 300, pollMs: 50, orgConcurrency: 4 };
  const a = await startEngineProcess(dbPath, options);
  let b: Awaited<ReturnType<typeof startEngineProcess>> | undefined;
  try {
    const runIds: string[] = [];
    for (let i = 0; i < 24; i++) {
      const { runId } = await client.enqueue({
        orgId: ORG,
        loopId: "loop_waits",
        input: { logFile, tag: `r${i}`, steps: 4, waitMs: 120 },
        trigger: TRIGGER,
      });
      runIds.push(runId);
    }
    const running = db.sqlite.query<{ n: number }, []>(
      `SELECT COUNT(*) AS n FROM runs WHERE status = 'running' AND orgId = '${ORG}'`,
    );
    const heldBy = db.sqlite.query<{ id: string }, [string]>(
      "SELECT id FROM runs WHERE status = 'running' AND leaseOwner = ?1",
    );
    // B starts once A holds runs: started together, B could win every claim on a loaded machine
    // (the organization's limit is shared) and A would never hold a run to be killed with.
    await waitFor(() => (heldBy.all(a.owner).length > 0 ? true : undefined), "process A to claim runs", 15_000);
    b = await startEngineProcess(dbPath, options);
    let most = 0;
    // Kill A while it holds runs mid-way.
    const taken = await waitFor(
      () => {
        most = Math.max(most, running.get()?.n ?? 0);
        const held = heldBy.all(a.owner).map((row) => row.id);
        return held.length > 0 && logLines(logFile).length >= 8 ? held : undefined;
      },
      "process A to hold runs mid-way",
      15_000,
    );
    a.proc.kill(9);
    await a.proc.exited;
    const status = db.sqlite.query<{ status: string; leaseOwner: string | null }, [string]>(
      "SELECT status, leaseOwner FROM runs WHERE id = ?1",
    );
    await waitFor(
      () => {
        most = Math.max(most, running.get()?.n ?? 0);
        return runIds.every((id) => status.get(id)?.status === "complete") ? true : undefined;
      },
      "every run to complete on process B",
      30_000,
    );
    expect(most).toBeLessThanOrEqual(4);
    expect(most).toBeGreaterThanOrEqual(2);

    const lines = logLines(logFile).map((line) => line.split(" "));
    const pidA = String(a.proc.pid);
    const pidB = String(b?.proc.pid);
    for (let i = 0; i < runIds.length; i++) {
      for (let step = 0; step < 4; step++) {
        const by = lines.filter(([tag, name]) => tag === `r${i}` && name === `step-${step}`).map(([, , pid]) => pid);
        // Once, or twice when A died after running it but before storing it; never twice on B.
        const onB = by.filter((pid) => pid === pidB).length;
        expect({ run: i, step, ok: by.length >= 1 && onB <= 1 && by.length - onB <= 1 }).toEqual({
          run: i,
          step,
          ok: true,
        });
      }
    }
    // The runs A held when it died were finished by B.
    for (const runId of taken) {
      const index = runIds.indexOf(runId);
      const last = lines.filter(([tag, name]) => tag === `r${index}` && name === "step-3").map(([, , pid]) => pid);
      expect({ runId, finishedOn: last.at(-1) }).toEqual({ runId, finishedOn: pidB });
    }
    expect(lines.some(([, , pid]) => pid === pidA)).toBe(true);
  } finally {
    a.proc.kill(9);
    b?.proc.kill("SIGTERM");
    await b?.proc.exited;
    db.close();
  }
}, 60_000);
