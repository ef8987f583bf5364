/**
 * The usage reader over both dialects (server/services/usage.ts, usage-reader-postgres.ts): the
 * same observations written through each dialect's rollup writer, and the same runs, give the
 * same summaries for every window and filter, with the figures the observations should make.
 * PostgreSQL's half skips, saying so, where it is not installed.
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { UsageInput } from "../schema/admin.ts";
import * as pgTables from "../schema/pg-tables.ts";
import * as liteTables from "../schema/tables.ts";
import { createUsageReader, type UsageReader, UsageRecorder, type UsageSummary } from "../server/services/usage.ts";
import { postgresUsageReader } from "../server/services/usage-reader-postgres.ts";
import { inlineWriteBehind } from "../server/services/write-behind.ts";
import { postgresWriteBehind } from "../server/services/write-behind-postgres.ts";
import { type DialectHarness, dialects, stopPostgres } from "./support/dialects.ts";
import { planningCall } from "./support/usage.ts";

const NOW = Date.UTC(2031, 4, 6, 12, 30, 15);
const MINUTE_MS = 60_000;

afterAll(stopPostgres);

const INPUTS: UsageInput[] = [
  { window: "1h" },
  { window: "24h" },
  { window: "7d" },
  { window: "30d" },
  { window: "24h", tokenId: "tok_1" },
  { window: "24h", company: "acme" },
  { window: "24h", loopId: "intake" },
  { window: "1h", tokenId: "tok_2", loopId: "triage" },
];

/** Planning calls and runs over the last two days, from two tokens, two companies and two loops. */
async function record(h: DialectHarness): Promise<void> {
  const writeBehind = h.dialect === "sqlite" ? inlineWriteBehind(h.db.sqlite) : postgresWriteBehind(h.db);
  let clock = NOW;
  const recorder = new UsageRecorder(writeBehind.usage, () => clock);
  const ages = [0, 1, 5, 59, 61, 300, 1_439, 1_500, 2_800];
  for (const [i, age] of ages.entries()) {
    clock = NOW - age * MINUTE_MS;
    for (const [j, tokenId] of ["tok_1", "tok_2"].entries()) {
      recorder.observePlanning({
        orgId: "org_a",
        company: j === 0 ? "acme" : "zenith",
        tokenId,
        status: i % 4 === 3 ? 429 : 200,
        problem: i % 5 === 4 ? "upstream_error" : undefined,
        cache: i % 2 === 0 ? "hit" : "miss",
        clinical: i % 6 === 5,
        totalMs: 0.3 + i * 7 + j,
        upstreamMs: i % 2 === 0 ? undefined : 20 + i * 30,
      });
      recorder.runQueued({ orgId: "org_a", loopId: j === 0 ? "intake" : "triage", tokenId });
      recorder.runEnded({
        orgId: "org_a",
        loopId: j === 0 ? "intake" : "triage",
        tokenId,
        status: i % 3 === 0 ? "errored" : "complete",
        durationMs: 150 + i * 900,
      });
    }
    // Another organization's rows are never counted.
    recorder.observePlanning(planningCall({ orgId: "org_b" }));
    recorder.flush();
  }
  await writeBehind.drain();
  const runs = [
    ["run_1", "intake", "queued", "token", "tok_1"],
    ["run_2", "intake", "running", "token", "tok_1"],
    ["run_3", "triage", "sleeping", "token", "tok_2"],
    ["run_4", "triage", "queued", "user", "tok_2"],
    ["run_5", "intake", "complete", "token", "tok_1"],
  ] as const;
  for (const [id, loopId, status, triggerKind, triggerId] of runs) {
    const row = {
      id,
      workflowInstanceId: `wf_${id}`,
      orgId: "org_a",
      loopId,
      triggerKind,
      triggerId,
      triggerName: "ci",
      status,
      createdAt: NOW,
      updatedAt: NOW,
    };
    if (h.dialect === "sqlite") h.db.orm.insert(liteTables.runs).values(row).run();
    else await h.db.orm.insert(pgTables.runs).values(row);
  }
  await writeBehind.close();
}

const readerOf = (h: DialectHarness): UsageReader =>
  h.dialect === "sqlite" ? createUsageReader(h.db.sqlite) : postgresUsageReader(h.db);

const summaries = new Map<string, UsageSummary[]>();

describe.each(dialects("the usage reader tests"))("usage reader over $name", ({ name, skip, open }) => {
  test.skipIf(skip)("summaries of every window and filter, from the written rollups", async () => {
    const h = await open();
    try {
      await record(h);
      const read = readerOf(h);
      const results = [];
      for (const input of INPUTS) results.push(await read("org_a", input, NOW));
      summaries.set(name, results);
      const [hour, day] = results;
      // The last hour holds the observations 0, 1, 5 and 59 minutes old, of two tokens each.
      expect(hour?.planning).toMatchObject({ requests: 8, cacheHits: 4, rateLimited: 2, clinicalBlocks: 0 });
      expect(hour?.runs).toMatchObject({ started: 8, completed: 4, errored: 4, inFlight: 2, queued: 2 });
      // 24 hours in whole steps of 30 minutes: back to 1,410 minutes (the six youngest).
      expect(day?.planning).toMatchObject({ requests: 12, cacheHits: 6, upstreamErrors: 2, clinicalBlocks: 2 });
      expect(day?.runs.failingLoops).toEqual([
        { loopId: "intake", completed: 4, errored: 2 },
        { loopId: "triage", completed: 4, errored: 2 },
      ]);
      expect(results[3]?.planning.requests).toBe(18);
      expect(results[6]?.runs).toMatchObject({ started: 6, inFlight: 1, queued: 1 });
      expect(results[7]?.runs).toMatchObject({ inFlight: 1, queued: 0 });
    } finally {
      await h.close();
    }
  });
});

test("both dialects give the same summaries, figure for figure", () => {
  const lite = summaries.get("SQLite");
  const pg = summaries.get("PostgreSQL");
  if (pg === undefined) return; // PostgreSQL not installed: said so above.
  expect(pg).toEqual(lite as UsageSummary[]);
});
