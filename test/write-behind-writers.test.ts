/**
 * The write-behind writers over both dialects (test/support/dialects.ts): planning audit rows
 * (plugins/planning/audit-log.ts, audit-log-postgres.ts) and usage rollups (server/services/usage.ts,
 * usage-writer-postgres.ts), through the server's queues (AuditLog, UsageRecorder) and a
 * WriteBehind of each dialect (the in-thread SQLite one; the PostgreSQL one). Both store the same
 * rows, histograms in the same text; and on PostgreSQL writers of several instances merging the
 * same minute at once lose nothing. PostgreSQL's half skips, saying so, where it is not installed.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { AuditLog } from "../plugins/planning/audit-log.ts";
import type { planAudit } from "../schema/tables.ts";
import { USAGE_BOUNDS, UsageRecorder } from "../server/services/usage.ts";
import { inlineWriteBehind, type WriteBehind } from "../server/services/write-behind.ts";
import { postgresWriteBehind } from "../server/services/write-behind-postgres.ts";
import { type DialectHarness, dialects, stopPostgres } from "./support/dialects.ts";
import { planningCall } from "./support/usage.ts";

const NOW = 1_700_000_000_000;
const MINUTE = Math.floor(NOW / 60_000);

afterAll(stopPostgres);

function writeBehindOf(h: DialectHarness): WriteBehind {
  return h.dialect === "sqlite" ? inlineWriteBehind(h.db.sqlite) : postgresWriteBehind(h.db);
}

const auditRow = (i: number): typeof planAudit.$inferSelect => ({
  auditId: `aud_${String(i).padStart(3, "0")}`,
  requestId: `req_${i}`,
  company: "acme",
  principalKind: i % 2 === 0 ? "token" : "system",
  principalId: "tok_1",
  intent: "build_agent",
  cache: "miss",
  upstreamLatencyMs: i % 3 === 0 ? null : 12 + i,
  blockedSteps: i % 4,
  status: 200,
  createdAt: NOW + i,
});

function observe(recorder: UsageRecorder, totalMs: number, upstreamMs: number): void {
  recorder.observePlanning(planningCall({ cache: "miss", totalMs, upstreamMs }));
}

describe.each(dialects("the write-behind writer tests"))("write-behind writers on $name", ({ name, skip, open }) => {
  test.skipIf(skip)("audit rows: every column stored, a row written twice kept once", async () => {
    const h = await open();
    try {
      const writeBehind = writeBehindOf(h);
      const log = new AuditLog(writeBehind.audit);
      // More than one batch of 256; the repeat lands inside a multi-row insert, the last rows one by one.
      for (let i = 0; i < 300; i++) {
        log.record(auditRow(i));
        if (i === 260) log.record(auditRow(7));
      }
      await log.drain();
      const rows = (await h.rows("planAudit")).sort((a, b) => a.auditId.localeCompare(b.auditId));
      expect(rows).toEqual(Array.from({ length: 300 }, (_, i) => auditRow(i)));
      await log.close();
    } finally {
      await h.close();
    }
  });

  test.skipIf(skip)("usage: two flushes of one minute add their counts and histograms", async () => {
    const h = await open();
    try {
      const writeBehind = writeBehindOf(h);
      const now = () => NOW;
      const recorders = [new UsageRecorder(writeBehind.usage, now), new UsageRecorder(writeBehind.usage, now)];
      for (const [i, recorder] of recorders.entries()) {
        for (const totalMs of [1, 3, 40]) observe(recorder, totalMs + 100 * i, 100 * i);
        recorder.runEnded({ orgId: "org_a", loopId: "loop_x", tokenId: "", status: "errored", durationMs: 700 });
        recorder.flush();
      }
      await writeBehind.drain();
      const rows = (await h.rows("usageMinutes")).sort((a, b) => a.loopId.localeCompare(b.loopId));
      const [planning, runs] = rows;
      expect(rows).toHaveLength(2);
      expect(planning?.minute).toBe(MINUTE);
      expect(planning?.requests).toBe(6);
      expect(planning?.cacheMisses).toBe(6);
      // 1, 3 and 40 ms of gateway time twice: buckets ≤1, ≤5 and ≤50, twice each; the text as SQLite writes it.
      const gateway = new Array<number>(USAGE_BOUNDS.latency.length + 1).fill(0);
      for (const bound of [1, 5, 50] as const) gateway[USAGE_BOUNDS.latency.indexOf(bound)] = 2;
      expect(planning?.gatewayMs).toBe(JSON.stringify(gateway));
      // Upstream: 0 ms three times (bucket ≤0.25), 100 ms three times (bucket ≤100).
      const upstream = JSON.parse(planning?.upstreamMs ?? "[]") as number[];
      expect(upstream[0]).toBe(3);
      expect(upstream[USAGE_BOUNDS.latency.indexOf(100)]).toBe(3);
      expect(planning?.runMs).toBeNull();
      expect(runs?.runsErrored).toBe(2);
      expect(JSON.parse(runs?.runMs ?? "[]")[USAGE_BOUNDS.run.indexOf(1_000)]).toBe(2);
      await writeBehind.close();
    } finally {
      await h.close();
    }
  });

  test.skipIf(skip || name === "SQLite")(
    "usage: eight instances' writers merging the same minutes at once lose nothing",
    async () => {
      const h = await open();
      try {
        const instances = Array.from({ length: 8 }, () => writeBehindOf(h));
        const ROUNDS = 15;
        await Promise.all(
          instances.map(async (writeBehind) => {
            const recorder = new UsageRecorder(writeBehind.usage, () => NOW);
            for (let round = 0; round < ROUNDS; round++) {
              observe(recorder, 3, 1);
              observe(recorder, 40, 20);
              // A second series, in the batch in another order than the first, for lock ordering.
              recorder.runQueued({ orgId: "org_a", loopId: "loop_x", tokenId: "" });
              recorder.flush();
              await new Promise((resolve) => setImmediate(resolve));
            }
            await writeBehind.drain();
          }),
        );
        const rows = (await h.rows("usageMinutes")).sort((a, b) => a.loopId.localeCompare(b.loopId));
        const [planning, runs] = rows;
        const total = instances.length * ROUNDS;
        expect(planning?.requests).toBe(2 * total);
        const gateway = JSON.parse(planning?.gatewayMs ?? "[]") as number[];
        expect(gateway.reduce((a, b) => a + b, 0)).toBe(2 * total);
        expect(gateway[USAGE_BOUNDS.latency.indexOf(2)]).toBe(total); // 3 − 1 = 2 ms
        expect(gateway[USAGE_BOUNDS.latency.indexOf(25)]).toBe(total); // 40 − 20 = 20 ms
        expect(runs?.runsStarted).toBe(total);
      } finally {
        await h.close();
      }
    },
  );
});
