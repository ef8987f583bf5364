/**
 * Usage on a real server after real traffic (planning calls to a loopback upstream stub, loop
 * runs on fixture loops), read through tRPC `usage.summary`; and the rollup's own arithmetic:
 * two writers on one database file add up, and percentiles come out of the histograms.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { openDatabase } from "../server/db.ts";
import {
  createUsageReader,
  type Pending,
  quantile,
  USAGE_BOUNDS,
  UsageRecorder,
  usageWriter,
} from "../server/services/usage.ts";
import { FIXTURE_LOOPS_DIR } from "./support/loops.ts";
import { planningBody, postPlan } from "./support/planning.ts";
import { mintToken, startTestServer, type TestServer, tempDir } from "./support/server.ts";
import { adminEnv, signIn } from "./support/trpc.ts";
import { startUpstreamStub, type UpstreamStub } from "./support/upstream-stub.ts";
import { planningCall } from "./support/usage.ts";

let server: TestServer;
let stub: UpstreamStub;
let tokenA: { id: string; token: string };
let tokenB: { id: string; token: string };
let client: Awaited<ReturnType<typeof signIn>>["client"];

async function trigger(token: string, loopId: string, body: unknown): Promise<string> {
  const response = await fetch(`${server.url}/loop/${server.defaultOrg.id}/${loopId}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { runId: string }).runId;
}

async function finished(token: string, loopId: string, runId: string): Promise<string> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const response = await fetch(`${server.url}/loop/${server.defaultOrg.id}/${loopId}/runs/${runId}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const run = (await response.json()) as { status: string };
    if (["complete", "errored", "terminated"].includes(run.status)) return run.status;
    if (Date.now() > deadline) throw new Error(`run ${runId} did not finish`);
    await Bun.sleep(20);
  }
}

beforeAll(async () => {
  stub = startUpstreamStub();
  server = await startTestServer({
    ...adminEnv,
    HEALTH_LOOPS_DIR: FIXTURE_LOOPS_DIR,
    HEALTH_UPSTREAM_URL: stub.url,
    HEALTH_UPSTREAM_RETRIES: "0",
    // Per company: both tokens belong to the default organization.
    HEALTH_RATE_LIMIT_PER_MINUTE: "6",
  });
  tokenA = mintToken(server, ["cli:run", "loop:run"]);
  tokenB = mintToken(server, ["cli:run"]);
  ({ client } = await signIn(server.url));

  // Token A: a miss, a hit, a clinical block, an upstream failure, one more miss; token B one
  // miss; then A's seventh call is refused with a 429.
  const plan = (token: string, prompt: string) =>
    postPlan(server.url, token, planningBody({ redacted_prompt: prompt })).then((r) => r.status);
  expect(await plan(tokenA.token, "build an intake agent for the front desk")).toBe(200);
  expect(await plan(tokenA.token, "build an intake agent for the front desk")).toBe(200);
  expect(await plan(tokenA.token, "should I double my metformin tonight?")).toBe(200);
  stub.script({ status: 500, raw: "{}" });
  expect(await plan(tokenA.token, "build a fax router for referrals")).toBe(502);
  expect(await plan(tokenA.token, "build a reminder loop for flu shots")).toBe(200);
  expect(await plan(tokenB.token, "deploy my intake loop")).toBe(200);
  expect(await plan(tokenA.token, "build a billing question router")).toBe(429);

  // Runs with token A: two that complete, one that fails outside a step.
  const runs = await Promise.all([
    trigger(tokenA.token, "loop_echo", { n: 1 }).then((id) => finished(tokenA.token, "loop_echo", id)),
    trigger(tokenA.token, "loop_echo", { n: 2 }).then((id) => finished(tokenA.token, "loop_echo", id)),
    trigger(tokenA.token, "loop_throws", { where: "run" }).then((id) => finished(tokenA.token, "loop_throws", id)),
  ]);
  expect(runs.sort()).toEqual(["complete", "complete", "errored"]);
});

afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
  await stub?.[Symbol.asyncDispose]();
});

/** The rollups are flushed every 50 ms in tests: poll until the expected count shows. */
async function summaryWhen(
  input: Parameters<typeof client.usage.summary.query>[0],
  ready: (s: Awaited<ReturnType<typeof client.usage.summary.query>>) => boolean,
) {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const summary = await client.usage.summary.query(input);
    if (ready(summary) || Date.now() > deadline) return summary;
    await Bun.sleep(25);
  }
}

describe("usage.summary", () => {
  test("counts planning calls, cache, clinical blocks, 429s, upstream failures, latency and runs", async () => {
    // A run's status is visible before its end reaches the rollup: wait for all three.
    const s = await summaryWhen(
      { window: "1h" },
      (x) => x.planning.requests >= 7 && x.runs.completed + x.runs.errored >= 3,
    );
    expect(s.planning).toMatchObject({
      requests: 7,
      cacheHits: 1,
      clinicalBlocks: 1,
      rateLimited: 1,
      upstreamErrors: 1,
      upstreamTimeouts: 0,
    });
    // Hits over answered plans: one hit, three misses (A's two and B's one).
    expect(s.planning.cacheHitRate).toBe(0.25);
    expect(s.planning.gatewayMs.p50).toBeGreaterThan(0);
    expect(s.planning.upstreamMs.p50).toBeGreaterThan(0);
    expect(s.runs).toMatchObject({ started: 3, completed: 2, errored: 1, inFlight: 0, queued: 0 });
    expect(s.runs.durationMs.p50).toBeGreaterThan(0);
    expect(s.runs.failingLoops).toEqual([{ loopId: "loop_throws", completed: 0, errored: 1 }]);
    // The series add up to the totals, one point a minute over the hour.
    expect(s.series.t).toHaveLength(60);
    expect(s.series.requests.reduce((a, b) => a + b, 0)).toBe(7);
    expect(s.series.runsStarted.reduce((a, b) => a + b, 0)).toBe(3);
    expect(s.series.t.at(-1)).toBeLessThanOrEqual(s.to);
    // Counts and ids only: no prompt anywhere.
    expect(JSON.stringify(s)).not.toContain("metformin");
    expect(JSON.stringify(s)).not.toContain("intake agent");
  });

  test("narrows to one token, one loop or one company", async () => {
    const b = await client.usage.summary.query({ window: "24h", tokenId: tokenB.id });
    expect(b.planning.requests).toBe(1);
    expect(b.runs.started).toBe(0);
    expect(b.series.t).toHaveLength(48);

    const echo = await client.usage.summary.query({ window: "7d", loopId: "loop_echo" });
    expect(echo.runs).toMatchObject({ started: 2, completed: 2, errored: 0 });
    expect(echo.runs.failingLoops).toEqual([]);

    const other = await client.usage.summary.query({ window: "30d", company: "someone-else" });
    expect(other.planning.requests).toBe(0);
    const own = await client.usage.summary.query({ window: "30d", company: server.defaultOrg.slug });
    expect(own.planning.requests).toBe(7);
  });

  test("rejects a window it does not know, and needs a session", async () => {
    await expect(client.usage.summary.query({ window: "2d" as "1h" })).rejects.toThrow(
      "window must be one of 1h, 24h, 7d, 30d",
    );
    const anonymous = await fetch(`${server.url}/trpc/usage.summary?input=${encodeURIComponent("{}")}`);
    expect(anonymous.status).toBe(401);
  });
});

describe("the rollup", () => {
  test("two writers on one file add their counts and histograms for the same minute", () => {
    using dir = tempDir("health-usage-");
    const url = `file:${join(dir, "usage.db")}`;
    const [one, two] = [openDatabase(url), openDatabase(url)];
    try {
      const now = () => 1_700_000_000_000;
      const writers = [
        new UsageRecorder(usageWriter(one.sqlite), now),
        new UsageRecorder(usageWriter(two.sqlite), now),
      ];
      for (const [i, writer] of writers.entries()) {
        for (const totalMs of [1, 3, 40]) {
          writer.observePlanning(
            planningCall({ tokenId: "", cache: "miss", totalMs: totalMs + 100 * i, upstreamMs: 100 * i }),
          );
        }
        writer.runEnded({ orgId: "org_a", loopId: "loop_x", tokenId: "", status: "errored", durationMs: 700 });
        writer.flush();
      }
      const rows = one.sqlite.query<{ requests: number; gatewayMs: string; runsErrored: number }, []>(
        "SELECT requests, gatewayMs, runsErrored FROM usage_minutes ORDER BY loopId",
      );
      const [planning, runs] = rows.all();
      expect(planning?.requests).toBe(6);
      // 1, 3 and 40 ms twice: buckets ≤1, ≤5 and ≤50.
      const gateway = JSON.parse(planning?.gatewayMs ?? "[]") as number[];
      expect(gateway[USAGE_BOUNDS.latency.indexOf(1)]).toBe(2);
      expect(gateway[USAGE_BOUNDS.latency.indexOf(5)]).toBe(2);
      expect(gateway[USAGE_BOUNDS.latency.indexOf(50)]).toBe(2);
      expect(runs?.runsErrored).toBe(2);

      const summary = createUsageReader(one.sqlite)("org_a", { window: "1h" }, now());
      expect(summary.planning.requests).toBe(6);
      expect(summary.runs.failingLoops).toEqual([{ loopId: "loop_x", completed: 0, errored: 2 }]);
      expect(summary.planning.upstreamMs.p50).not.toBeNull();
    } finally {
      one.close();
      two.close();
    }
  });

  test("each call lands in its own minute and series, across alternating series, a new minute and a flush", () => {
    const batches: Pending[][] = [];
    let clock = 1_700_000_000_000;
    const recorder = new UsageRecorder(
      (batch) => batches.push(JSON.parse(batch)),
      () => clock,
    );
    const call = (company: string) => recorder.observePlanning(planningCall({ company }));
    for (const company of ["a", "a", "b", "a"]) call(company);
    clock += 60_000;
    call("a");
    recorder.flush();
    call("a");
    recorder.flush();
    const counts = batches.map((rows) => rows.map((r) => `${r.minute % 10} ${r.company} ${r.counts.requests}`).sort());
    const minute = Math.floor(1_700_000_000_000 / 60_000) % 10;
    expect(counts).toEqual([
      [`${minute} a 3`, `${minute} b 1`, `${(minute + 1) % 10} a 1`],
      [`${(minute + 1) % 10} a 1`],
    ]);
  });

  test("percentiles interpolate inside a bucket and stop at the last bound", () => {
    const bounds = [10, 20, 40];
    expect(quantile(bounds, [0, 0, 0, 0], 0.5)).toBeNull();
    // 10 values in (10, 20]: the median is halfway.
    expect(quantile(bounds, [0, 10, 0, 0], 0.5)).toBe(15);
    expect(quantile(bounds, [5, 5, 0, 0], 0.5)).toBe(10);
    // Everything above the last bound: only the bound is known.
    expect(quantile(bounds, [0, 0, 0, 3], 0.99)).toBe(40);
  });
});
