import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { runRecordSchema } from "../schema/runs.ts";
import { problemSchema } from "../schema/wire.ts";
import { openDatabase } from "../server/db.ts";
import { mintToken, startTestServer, type TestServer, tempDir } from "./support/server.ts";
import { adminEnv, signIn } from "./support/trpc.ts";

const FIXTURES = join(import.meta.dir, "fixtures", "loops");
const env = { ...adminEnv, HEALTH_LOOPS_DIR: FIXTURES };

function trigger(server: TestServer, token: string, loopId: string, init: RequestInit & { orgId?: string } = {}) {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${token}`);
  if (init.body !== undefined && !headers.has("content-type")) headers.set("content-type", "application/json");
  return fetch(`${server.url}/loop/${init.orgId ?? server.defaultOrg.id}/${loopId}`, {
    ...init,
    method: "POST",
    headers,
  });
}

async function waitForRun(server: TestServer, token: string, loopId: string, runId: string) {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const response = await fetch(`${server.url}/loop/${server.defaultOrg.id}/${loopId}/runs/${runId}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const run = await response.json();
    if (["complete", "errored", "terminated"].includes(run.status)) return run;
    await Bun.sleep(20);
  }
  throw new Error(`run ${runId} did not finish`);
}

const mint = mintToken;

describe("trigger endpoint", () => {
  test("202 with run ids; the run is durable before the answer and completes with event.body as input", async () => {
    await using server = await startTestServer(env);
    const { token } = await mint(server, ["loop:run"]);
    const body = { hello: "world", n: [1, 2, 3] };
    const response = await trigger(server, token, "loop_echo", { body: JSON.stringify(body) });
    expect(response.status).toBe(202);
    const started = await response.json();
    expect(started.runId).toMatch(/^run_[A-Za-z0-9]+$/);
    expect(started.workflowInstanceId).toEqual(expect.any(String));
    // Read straight from the file: the row exists as soon as the 202 arrived.
    const db = new Database(server.dbPath, { readonly: true });
    expect(db.query("SELECT loopId, triggerKind FROM runs WHERE id = ?").get(started.runId)).toEqual({
      loopId: "loop_echo",
      triggerKind: "token",
    });
    db.close();
    const run = await waitForRun(server, token, "loop_echo", started.runId);
    expect(run).toMatchObject({
      id: started.runId,
      workflowInstanceId: started.workflowInstanceId,
      loopId: "loop_echo",
      status: "complete",
      input: body,
      output: { seen: { isUndefined: false, body }, counts: [1, 2], nothing: "undefined" },
      error: null,
    });
    expect(run.steps.map((s: { key: string }) => s.key)).toEqual(["look", "count", "count#2", "nothing"]);
    for (const field of ["createdAt", "updatedAt"]) expect(run[field]).toEqual(expect.any(String));
  });

  test("a bodiless POST gives event.body === undefined; JSON null stays null", async () => {
    await using server = await startTestServer(env);
    const { token } = await mint(server, ["loop:run:loop_echo"]);
    const bodiless = await (await trigger(server, token, "loop_echo")).json();
    const run = await waitForRun(server, token, "loop_echo", bodiless.runId);
    expect(run.output.seen).toEqual({ isUndefined: true });
    expect("input" in run ? run.input : undefined).toBeUndefined();
    const nullBody = await (await trigger(server, token, "loop_echo", { body: "null" })).json();
    expect((await waitForRun(server, token, "loop_echo", nullBody.runId)).input).toBeNull();
  });

  test("organization × scope × revoked matrix", async () => {
    await using server = await startTestServer(env);
    const db = openDatabase(`file:${server.dbPath}`);
    db.sqlite.run("INSERT INTO organizations (id, slug, name, createdAt) VALUES ('org_other', 'other', 'Other', 0)");
    db.close();
    const all = await mint(server, ["loop:run"]);
    const echoOnly = await mint(server, ["loop:run:loop_echo"]);
    const planner = await mint(server, ["cli:run"]);
    const foreign = await mint(server, ["loop:run"], "org_other");
    const revoked = await mint(server, ["loop:run"]);
    const { client } = await signIn(server.url);
    await client.tokens.revoke.mutate({ id: revoked.id });

    const cases: Array<[string, string, string, number]> = [
      ["all loops", all.token, "loop_echo", 202],
      ["all loops, other loop", all.token, "loop_throws", 202],
      ["one loop", echoOnly.token, "loop_echo", 202],
      ["one loop, other loop", echoOnly.token, "loop_throws", 403],
      ["cli:run only", planner.token, "loop_echo", 403],
      ["other organization", foreign.token, "loop_echo", 403],
      ["revoked", revoked.token, "loop_echo", 401],
      ["system key", server.systemKey, "loop_echo", 403],
      ["garbage", "hlth_nope", "loop_echo", 401],
      ["unknown loop in own org", all.token, "loop_nope", 404],
    ];
    for (const [name, token, loopId, status] of cases) {
      const response = await trigger(server, token, loopId, { body: "{}" });
      expect({ name, status: response.status }).toEqual({ name, status });
      if (status !== 202) v.parse(problemSchema, await response.json());
    }
    // Another organization's URL: 403 whether or not the loop exists there, no hint either way.
    for (const loopId of ["loop_echo", "loop_nope"]) {
      const response = await trigger(server, all.token, loopId, { orgId: "org_other", body: "{}" });
      expect(response.status).toBe(403);
      expect((await response.json()).detail).toBe("token belongs to another organization");
    }
  });

  test("body limits, media type, malformed and deeply nested JSON", async () => {
    await using server = await startTestServer(env);
    const { token } = await mint(server, ["loop:run"]);
    const big = JSON.stringify({ pad: "x".repeat(1024 * 1024 - 9) });
    expect(big.length).toBe(1024 * 1024 + 1);
    expect((await trigger(server, token, "loop_echo", { body: big })).status).toBe(413);
    const exact = JSON.stringify({ pad: "x".repeat(1024 * 1024 - 10) });
    expect((await trigger(server, token, "loop_echo", { body: exact })).status).toBe(202);
    // Chunked, without Content-Length: counted while streaming, refused once over the limit.
    const chunked = (size: number) => {
      const chunk = new TextEncoder().encode(`"${"y".repeat(64 * 1024 - 2)}"`);
      let sent = 0;
      return new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent >= size) return controller.close();
          sent += chunk.byteLength;
          controller.enqueue(
            sent === chunk.byteLength ? chunk : new TextEncoder().encode(" ".repeat(chunk.byteLength)),
          );
        },
      });
    };
    const streamedSmall = await trigger(server, token, "loop_echo", { body: chunked(64 * 1024) });
    expect(streamedSmall.status).toBe(202);
    const streamedBig = await trigger(server, token, "loop_echo", { body: chunked(4 * 1024 * 1024) });
    expect(streamedBig.status).toBe(413);
    const text = await trigger(server, token, "loop_echo", { body: "hi", headers: { "content-type": "text/plain" } });
    expect(text.status).toBe(415);
    expect((await trigger(server, token, "loop_echo", { body: "{nope" })).status).toBe(400);
    const deep = `${"[".repeat(5000)}${"]".repeat(5000)}`;
    const nested = await trigger(server, token, "loop_echo", { body: deep });
    expect(nested.status).toBe(400);
    expect((await nested.json()).code).toBe("invalid_request");
  });

  test("the same Idempotency-Key gives the same run, also under concurrency", async () => {
    await using server = await startTestServer(env);
    const { token } = await mint(server, ["loop:run"]);
    const send = (key: string, body = '{"a":1}') =>
      trigger(server, token, "loop_echo", { body, headers: { "idempotency-key": key } });
    const first = await (await send("k1")).json();
    const again = await send("k1");
    expect(again.status).toBe(202);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual(first);
    expect((await send("k1", '{"a":2}')).status).toBe(409);

    const burst = await Promise.all(Array.from({ length: 20 }, () => send("k2")));
    const accepted = burst.filter((r) => r.status === 202);
    const ids = new Set(await Promise.all(accepted.map(async (r) => (await r.json()).runId)));
    expect(ids.size).toBe(1);
    for (const r of burst) expect([202, 409]).toContain(r.status);
    const db = new Database(server.dbPath, { readonly: true });
    expect(db.query("SELECT count(*) AS n FROM runs").get()).toEqual({ n: 2 });
    db.close();
  });

  test("a failing loop errors its run with a reason; a missing run is 404", async () => {
    await using server = await startTestServer(env);
    const { token } = await mint(server, ["loop:run"]);
    const started = await (await trigger(server, token, "loop_throws", { body: "{}" })).json();
    const run = await waitForRun(server, token, "loop_throws", started.runId);
    expect(run.status).toBe("errored");
    expect(run.error.message).toEqual(expect.any(String));
    // The record is exactly schema/runs.ts's shape (parsing drops unknown keys: nothing may be dropped).
    expect(v.parse(runRecordSchema, run)).toEqual(run);
    const document = await (await fetch(`${server.url}/openapi.json`)).json();
    const runPath = document.paths["/loop/{org_id}/{loop_id}/runs/{run_id}"].get.responses["200"];
    expect(runPath.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Run" });
    const described = document.components.schemas.Run;
    expect(Object.keys(run).filter((key) => !(key in described.properties))).toEqual([]);
    expect(described.required.filter((key: string) => !(key in run))).toEqual([]);
    const missing = await fetch(`${server.url}/loop/${server.defaultOrg.id}/loop_echo/runs/run_nope`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(missing.status).toBe(404);
  });
});

describe("loops and runs over tRPC", () => {
  test("list loops with trigger URLs, start a run as the user, list and get it", async () => {
    await using server = await startTestServer(env);
    const { client } = await signIn(server.url);
    const loops = await client.loops.list.query();
    expect(loops.map((l) => l.id)).toContain("loop_echo");
    expect(loops.find((l) => l.id === "loop_echo")).toEqual({
      id: "loop_echo",
      name: "EchoLoop",
      orgId: server.defaultOrg.id,
      triggerUrl: `${server.url}/loop/${server.defaultOrg.id}/loop_echo`,
      lastDay: { runs: 0, complete: 0, errored: 0, lastRun: null },
    });
    const started = await client.runs.start.mutate({ loopId: "loop_echo", body: { from: "console" } });
    const deadline = Date.now() + 10_000;
    let run = await client.runs.get.query({ id: started.runId });
    while (run.status !== "complete" && Date.now() < deadline) {
      await Bun.sleep(20);
      run = await client.runs.get.query({ id: started.runId });
    }
    expect(run).toMatchObject({
      status: "complete",
      input: { from: "console" },
      trigger: { kind: "user", name: "admin@example.com" },
    });
    const page = await client.runs.list.query({ loopId: "loop_echo" });
    expect(page.runs.map((r) => r.id)).toContain(started.runId);
    const echo = (await client.loops.list.query()).find((l) => l.id === "loop_echo");
    expect(echo?.lastDay).toEqual({
      runs: 1,
      complete: 1,
      errored: 0,
      lastRun: { status: "complete", createdAt: run.createdAt },
    });
  });

  test("lists the modules of the loops folder that were skipped, with the line to fix", async () => {
    using dir = tempDir("health-skipped-");
    writeFileSync(
      join(dir, "ok.ts"),
      `import { Workflow } from "health/loop";\nexport default class Ok extends Workflow { async run() { return 1; } }\n`,
    );
    writeFileSync(
      join(dir, "typo.ts"),
      `import { Workflow } from "health/loop";\nexport default class T extends Workflow {\n  async run() { return 1 +; }\n}\n`,
    );
    writeFileSync(
      join(dir, "lost.ts"),
      `import { Workflow } from "health/loop";\nimport { x } from "./_gone.ts";\nexport default class L extends Workflow { async run() { return x; } }\n`,
    );
    await using server = await startTestServer({ ...adminEnv, HEALTH_LOOPS_DIR: `${dir}` });
    const { client } = await signIn(server.url);
    expect((await client.loops.list.query()).map((l) => l.id)).toEqual(["loop_ok"]);
    expect(await client.loops.skipped.query()).toEqual([
      {
        file: join(dir, "lost.ts"),
        location: `${join(dir, "lost.ts")}:2:19`,
        message: 'the module failed to load: cannot find module "./_gone.ts"',
      },
      {
        file: join(dir, "typo.ts"),
        location: `${join(dir, "typo.ts")}:3:27`,
        message: "the module failed to load: Unexpected ;",
      },
    ]);
    expect(server.logs).toContain(
      `Loop module ${join(dir, "typo.ts")} skipped: the module failed to load: Unexpected ; at ${join(dir, "typo.ts")}:3:27`,
    );
  });
});
