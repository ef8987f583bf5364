import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import * as v from "valibot";
import { milliseconds } from "../http/context.ts";
import { LITERAL_KEY_CHARS, planCacheKey } from "../plugins/cache/index.ts";
import { blockedCategories, planningResponseSchema, problemSchema } from "../schema/wire.ts";
import { planningBody, postPlan } from "./support/planning.ts";
import { mintToken, startTestServer, tempDir } from "./support/server.ts";
import { GOOD_PLAN, startUpstreamStub } from "./support/upstream-stub.ts";

async function problemOf(response: Response) {
  expect(response.headers.get("content-type")).toStartWith("application/problem+json");
  expect(response.headers.get("x-request-id")).toBeTruthy();
  return v.parse(problemSchema, await response.json());
}

describe("planning endpoint, embedded planner", () => {
  test("answers a builder prompt with a sanitized plan, request id and one timing per plugin", async () => {
    await using server = await startTestServer();
    const response = await postPlan(server.url, server.systemKey);
    expect(response.status).toBe(200);
    const plan = v.parse(planningResponseSchema, await response.json());
    expect(plan.model).toBe("planner-v0");
    expect(plan.execution_target).toBe("local_terminal");
    expect(plan.tool_plan.length).toBeGreaterThan(0);
    for (const step of plan.tool_plan) {
      expect(step.command).toStartWith("health ");
      expect(step.blocked_reason).toBeNull();
    }
    expect(plan.assistant_message.split("\n").length).toBeLessThanOrEqual(6);
    expect(plan.metadata).toMatchObject({ egress: "embedded", classified_intent: "build_agent" });
    expect(response.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const timing = response.headers.get("server-timing") ?? "";
    for (const name of ["auth", "rate-limit", "safety-gate", "cache", "planning", "sanitizer", "total"]) {
      expect(timing).toContain(`${name};`);
    }
    expect(response.headers.get("x-health-cache")).toBe("miss");
    expect(response.headers.get("ratelimit-policy")).toBe('"minute";q=20;w=60, "day";q=200;w=86400');
    expect(response.headers.get("ratelimit")).toMatch(/^"minute";r=19;t=\d+, "day";r=199;t=\d+$/);
  });

  test("an identical prompt is a cache hit with a fresh audit id", async () => {
    await using server = await startTestServer();
    const first = await postPlan(server.url, server.systemKey);
    const second = await postPlan(server.url, server.systemKey);
    expect(second.headers.get("x-health-cache")).toBe("hit");
    const timing = second.headers.get("server-timing") ?? "";
    expect(timing).toContain('planning;desc="skipped"');
    expect(timing).toMatch(
      /^auth;dur=[\d.]+, rate-limit;dur=[\d.]+, safety-gate;dur=[\d.]+, cache;dur=[\d.]+, sanitizer;dur=/,
    );
    expect(second.headers.get("content-type")).toBe("application/json;charset=utf-8");
    const [textA, textB] = [await first.text(), await second.text()];
    const [a, b] = [
      v.parse(planningResponseSchema, JSON.parse(textA)),
      v.parse(planningResponseSchema, JSON.parse(textB)),
    ];
    expect(b.audit_id).not.toBe(a.audit_id);
    // The same bytes apart from the audit id.
    expect(textB.replace(b.audit_id, "")).toBe(textA.replace(a.audit_id, ""));
    const other = await postPlan(server.url, server.systemKey, planningBody({ workspace_manifest: { name: "x" } }));
    expect(other.headers.get("x-health-cache")).toBe("miss");
  });

  test("a prompt longer than a literal cache key is a hit too, and one differing only in its last word is not", async () => {
    await using server = await startTestServer();
    const prompt = `build an intake agent for our clinic's SMS line; ${"it routes forms to the front desk. ".repeat(40)}`;
    const body = (ending: string) => planningBody({ redacted_prompt: `${prompt}${ending}` });
    expect((await postPlan(server.url, server.systemKey, body("Thanks"))).headers.get("x-health-cache")).toBe("miss");
    expect((await postPlan(server.url, server.systemKey, body("Thanks"))).headers.get("x-health-cache")).toBe("hit");
    expect((await postPlan(server.url, server.systemKey, body("Thank you"))).headers.get("x-health-cache")).toBe(
      "miss",
    );
  });

  test("the cache key: every part counts, the manifest's key order does not; a long key is a SHA-256", () => {
    const base = {
      company: "acme",
      prompt: "build an intake agent",
      intent: "build_agent",
      manifest: null,
      model: "m",
    };
    const keys = [
      base,
      { ...base, company: "acme2" },
      { ...base, prompt: "build an intake agent." },
      { ...base, intent: "explain" },
      { ...base, manifest: { a: 1 } },
      { ...base, model: "m2" },
      // A part that swallows its neighbour's text is still another key.
      { ...base, company: 'acme","build an intake agent', prompt: "" },
    ].map(planCacheKey);
    expect(new Set(keys).size).toBe(keys.length);
    expect(planCacheKey({ ...base, manifest: { a: 1, b: [2, { c: 3, d: 4 }] } })).toBe(
      planCacheKey({ ...base, manifest: { b: [2, { d: 4, c: 3 }], a: 1 } }),
    );
    const long = planCacheKey({ ...base, prompt: "x".repeat(LITERAL_KEY_CHARS) });
    expect(long).toMatch(/^[0-9a-f]{64}$/);
    expect(planCacheKey({ ...base, prompt: `${"x".repeat(LITERAL_KEY_CHARS - 1)}y` })).not.toBe(long);
  });

  test("Server-Timing durations are milliseconds to the microsecond", () => {
    expect([0, 0.0123456, 0.0995, 1.5, 12.3456789, 1234.0004].map(milliseconds)).toEqual([
      "0.000",
      "0.012",
      "0.100",
      "1.500",
      "12.346",
      "1234.000",
    ]);
  });

  test("GET /cli/account reports company, token, versions and the remaining budget", async () => {
    await using server = await startTestServer();
    await postPlan(server.url, server.systemKey, planningBody(), { "x-service-company": "acme-clinic" });
    const response = await fetch(`${server.url}/cli/account`, {
      headers: {
        authorization: `Bearer ${server.systemKey}`,
        "x-service-company": "acme-clinic",
        "x-service-cli-version": "0.1.0",
      },
    });
    expect(response.status).toBe(200);
    const account = await response.json();
    expect(account).toMatchObject({
      company: "acme-clinic",
      token_name: "system key",
      scopes: ["cli:run"],
      cli_version: "0.1.0",
      server_version: "0.1.0",
      rate_limit: { minute: { limit: 20, remaining: 19 }, day: { limit: 200, remaining: 199 } },
    });
  });

  test("serves an OpenAPI document", async () => {
    await using server = await startTestServer();
    const doc = await (await fetch(`${server.url}/openapi.json`)).json();
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toEqual([
      "/cli/code/sessions",
      "/loop/{org_id}/{loop_id}",
      "/loop/{org_id}/{loop_id}/runs/{run_id}",
      "/cli/account",
    ]);
    expect(doc.components.schemas.PlanningRequest.required).toContain("redacted_prompt");
  });
});

describe("safety gate", () => {
  test("a clinical prompt is blocked whatever intent the client sent, and the upstream is not called", async () => {
    await using stub = startUpstreamStub();
    await using server = await startTestServer({ HEALTH_UPSTREAM_URL: stub.url });
    const body = planningBody({ redacted_prompt: "What dose of metformin should I prescribe for this patient?" });
    const response = await postPlan(server.url, server.systemKey, body);
    expect(response.status).toBe(200);
    const plan = v.parse(planningResponseSchema, await response.json());
    expect(plan.tool_plan).toEqual([]);
    // The metadata of docs/interface.md §2.2, with what fired (blocked_category).
    expect(plan.metadata).toEqual({
      upstream: "skipped",
      blocked: "clinical_advice",
      classified_intent: "clinical_blocked",
      blocked_category: "medication_dosing",
    });
    expect(plan.assistant_message).toContain("(medication dosing)");
    expect(plan.assistant_message.split("\n").length).toBeLessThanOrEqual(6);
    // A builder prompt the client flagged is blocked too, and still names a category from the closed list.
    const clientBlocked = await postPlan(server.url, server.systemKey, planningBody({ intent: "clinical_blocked" }));
    const clientPlan = v.parse(planningResponseSchema, await clientBlocked.json());
    expect(clientPlan.tool_plan).toEqual([]);
    const category = "blocked_category" in clientPlan.metadata ? clientPlan.metadata.blocked_category : "";
    expect(blockedCategories as readonly string[]).toContain(category ?? "");
    expect(stub.calls.length).toBe(0);
  });

  test("patient data left in the prompt is redacted before the upstream sees it", async () => {
    await using stub = startUpstreamStub();
    await using server = await startTestServer({ HEALTH_UPSTREAM_URL: stub.url });
    const prompt = "build an intake agent; test record: SSN 123-45-6789, email jane.doe@example.com";
    const response = await postPlan(server.url, server.systemKey, planningBody({ redacted_prompt: prompt }));
    expect(response.status).toBe(200);
    const sent = JSON.stringify(stub.calls[0]?.body);
    expect(sent).not.toContain("123-45-6789");
    expect(sent).not.toContain("jane.doe@example.com");
    expect(sent).toContain("build an intake agent");
  });
});

describe("errors", () => {
  test("no bearer, a malformed or unknown token: 401 with a Bearer challenge, before any validation", async () => {
    await using server = await startTestServer();
    for (const authorization of [undefined, "Bearer nope", "Basic abc", `Bearer hlth_${"a".repeat(38)}`]) {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (authorization) headers.authorization = authorization;
      const response = await fetch(`${server.url}/cli/code/sessions`, {
        method: "POST",
        headers,
        body: JSON.stringify({ redacted_prompt: "" }),
      });
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toBe('Bearer realm="health", error="invalid_token"');
      expect(await problemOf(response)).toMatchObject({ code: "unauthorized", status: 401 });
    }
  });

  test("without a valid bearer, a malformed, non-JSON or oversized body is still 401: nothing is parsed first", async () => {
    await using server = await startTestServer();
    const orgLoop = `${server.url}/loop/${server.defaultOrg.id}/loop_intake`;
    const bodies: Array<[string, string]> = [
      ["application/json", "{not json"],
      ["text/plain", "hello"],
      ["application/json", JSON.stringify({ pad: "x".repeat(2 * 1024 * 1024) })],
    ];
    for (const url of [`${server.url}/cli/code/sessions`, orgLoop]) {
      for (const authorization of [undefined, "Bearer hlth_nope"]) {
        for (const [type, body] of bodies) {
          const headers: Record<string, string> = { "content-type": type };
          if (authorization) headers.authorization = authorization;
          const response = await fetch(url, { method: "POST", headers, body });
          expect(await problemOf(response)).toMatchObject({ code: "unauthorized" });
          expect({ url, authorization, type, size: body.length, status: response.status }).toEqual({
            url,
            authorization,
            type,
            size: body.length,
            status: 401,
          });
        }
      }
    }
  });

  test("an empty or blank redacted_prompt and missing fields are 400 with their paths", async () => {
    await using server = await startTestServer();
    for (const prompt of ["", "   \n "]) {
      const response = await postPlan(server.url, server.systemKey, planningBody({ redacted_prompt: prompt }));
      expect(response.status).toBe(400);
      const problem = await problemOf(response);
      expect(problem.code).toBe("invalid_request");
      expect(problem.errors).toContainEqual({ path: "redacted_prompt", message: "redacted_prompt must not be empty" });
    }
    const { session_id: _, ...missing } = planningBody({ route_context: {} });
    const problem = await problemOf(await postPlan(server.url, server.systemKey, missing));
    expect(problem.errors?.map((e) => e.path).sort()).toEqual(["route_context.hosted", "session_id"]);
  });

  test("malformed JSON is 400, a body that is not JSON is 415, over 64 KiB is 413", async () => {
    await using server = await startTestServer();
    const malformed = await postPlan(server.url, server.systemKey, "{ not json");
    expect(malformed.status).toBe(400);
    expect((await problemOf(malformed)).code).toBe("invalid_request");

    const text = await fetch(`${server.url}/cli/code/sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.systemKey}`, "content-type": "text/plain" },
      body: "hello",
    });
    expect(text.status).toBe(415);
    expect((await problemOf(text)).code).toBe("unsupported_media_type");

    const big = await postPlan(server.url, server.systemKey, planningBody({ redacted_prompt: "x".repeat(70_000) }));
    expect(big.status).toBe(413);
    expect((await problemOf(big)).code).toBe("payload_too_large");

    const nullBody = await postPlan(server.url, server.systemKey, "null");
    expect(nullBody.status).toBe(400);
  });

  test("unknown routes are problem+json 404", async () => {
    await using server = await startTestServer();
    const response = await fetch(`${server.url}/nope`);
    expect(response.status).toBe(404);
    expect((await problemOf(response)).code).toBe("not_found");
  });
});

describe("idempotency", () => {
  test("a repeat returns the stored response; another body with the key is 409", async () => {
    await using server = await startTestServer();
    const body = planningBody();
    const headers = { "idempotency-key": "key-1" };
    const first = await postPlan(server.url, server.systemKey, body, headers);
    const again = await postPlan(server.url, server.systemKey, body, headers);
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("content-type")).toBe("application/json;charset=utf-8");
    expect(again.headers.get("x-health-cache")).toBe(first.headers.get("x-health-cache"));
    expect(await again.text()).toBe(await first.text());
    const other = await postPlan(server.url, server.systemKey, planningBody(), headers);
    expect(other.status).toBe(409);
    expect((await problemOf(other)).code).toBe("idempotency_conflict");
  });

  test("a repeat while the first is still in flight is 409", async () => {
    await using stub = startUpstreamStub();
    stub.script({ delayMs: 400 });
    await using server = await startTestServer({ HEALTH_UPSTREAM_URL: stub.url });
    const body = planningBody();
    const headers = { "idempotency-key": "slow" };
    const first = postPlan(server.url, server.systemKey, body, headers);
    while (stub.calls.length === 0) await Bun.sleep(5);
    const second = await postPlan(server.url, server.systemKey, body, headers);
    expect(second.status).toBe(409);
    expect((await first).status).toBe(200);
  });

  test("a failed call frees its key for a retry", async () => {
    await using stub = startUpstreamStub();
    stub.script({ status: 400 });
    await using server = await startTestServer({ HEALTH_UPSTREAM_URL: stub.url });
    const body = planningBody();
    const headers = { "idempotency-key": "retry-me" };
    expect((await postPlan(server.url, server.systemKey, body, headers)).status).toBe(502);
    expect((await postPlan(server.url, server.systemKey, body, headers)).status).toBe(200);
  });
});

describe("rate limits", () => {
  test("concurrent requests never over-admit, and 429 carries Retry-After and RateLimit headers", async () => {
    await using server = await startTestServer({ HEALTH_RATE_LIMIT_PER_MINUTE: "7" });
    const responses = await Promise.all(
      Array.from({ length: 30 }, () =>
        postPlan(server.url, server.systemKey, planningBody(), { "x-service-company": "acme" }),
      ),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200).length).toBe(7);
    expect(statuses.filter((s) => s === 429).length).toBe(23);
    const limited = responses.find((r) => r.status === 429);
    expect(Number(limited?.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited?.headers.get("ratelimit")).toMatch(/^"minute";r=0;/);
    expect((await problemOf(limited as Response)).code).toBe("rate_limited");
    // Another company has its own budget.
    expect(
      (await postPlan(server.url, server.systemKey, planningBody(), { "x-service-company": "other" })).status,
    ).toBe(200);
  });

  test("the daily count survives a restart", async () => {
    using dir = tempDir();
    const env = { HEALTH_RATE_LIMIT_PER_DAY: "3" };
    {
      await using server = await startTestServer(env, dir);
      for (let i = 0; i < 2; i++) expect((await postPlan(server.url, server.systemKey)).status).toBe(200);
    }
    await using server = await startTestServer(env, dir);
    expect((await postPlan(server.url, server.systemKey)).status).toBe(200);
    expect((await postPlan(server.url, server.systemKey)).status).toBe(429);
  });
});

describe("upstream", () => {
  test("routes through the gateway with attribution and reports the model routing chose", async () => {
    await using stub = startUpstreamStub();
    await using server = await startTestServer({ HEALTH_UPSTREAM_URL: stub.url, HEALTH_UPSTREAM_API_KEY: "sk-test" });
    const response = await postPlan(server.url, server.systemKey);
    const plan = v.parse(planningResponseSchema, await response.json());
    expect(plan.metadata).toEqual({
      egress: new URL(stub.url).host,
      upstream_provider: "Chutes",
      upstream_model: "meta-llama/llama-3.3-70b-instruct:free",
      classified_intent: "build_agent",
    });
    const call = stub.calls[0];
    expect(call?.headers.get("authorization")).toBe("Bearer sk-test");
    expect(call?.headers.get("x-title")).toBeTruthy();
    expect(call?.body).toMatchObject({ model: "openrouter/auto" });
  });

  test("a fenced reply with extra text parses; identical concurrent misses make one upstream call", async () => {
    await using stub = startUpstreamStub();
    stub.script({
      delayMs: 200,
      content: `Sure! Here is the plan:\n\`\`\`json\n${JSON.stringify(GOOD_PLAN)}\n\`\`\`\nEnjoy.`,
    });
    await using server = await startTestServer({ HEALTH_UPSTREAM_URL: stub.url });
    const responses = await Promise.all(Array.from({ length: 8 }, () => postPlan(server.url, server.systemKey)));
    expect(responses.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(stub.calls.length).toBe(1);
    const plans = await Promise.all(responses.map((r) => r.json()));
    expect(new Set(plans.map((p) => p.audit_id)).size).toBe(8);
    expect(plans[0].tool_plan.map((s: { command: string }) => s.command)).toEqual(
      GOOD_PLAN.tool_plan.map((s) => s.command),
    );
    expect(responses.map((r) => r.headers.get("x-health-cache")).sort()).toEqual([
      "hit",
      "hit",
      "hit",
      "hit",
      "hit",
      "hit",
      "hit",
      "miss",
    ]);
  });

  test("when the one coalesced upstream call fails, every waiter fails with it and nothing is cached", async () => {
    await using stub = startUpstreamStub();
    stub.script({ delayMs: 200, status: 503 });
    await using server = await startTestServer({ HEALTH_UPSTREAM_URL: stub.url, HEALTH_UPSTREAM_RETRIES: "0" });
    const responses = await Promise.all(Array.from({ length: 4 }, () => postPlan(server.url, server.systemKey)));
    expect(responses.map((r) => r.status)).toEqual([502, 502, 502, 502]);
    for (const r of responses) expect((await problemOf(r)).code).toBe("upstream_error");
    expect(stub.calls.length).toBe(1);
    const retry = await postPlan(server.url, server.systemKey);
    expect(retry.status).toBe(200);
    expect(retry.headers.get("x-health-cache")).toBe("miss");
  });

  test("a hostile plan leaves with every unsafe step blocked and the message cut to 6 lines", async () => {
    await using stub = startUpstreamStub();
    const hostile = {
      assistant_message: Array.from({ length: 200 }, (_, i) => `line ${i}`).join("\n"),
      tool_plan: [
        { kind: "scaffold", command: "rm -rf ~", purpose: "x", requires_auth: false },
        { kind: "scaffold", command: "health init a --channel sms; rm -rf ~", purpose: "x", requires_auth: false },
        { kind: "verify", command: "health verify\nrm -rf ~", purpose: "x", requires_auth: false },
        { kind: "build", command: "health agent build $(whoami)", purpose: "x", requires_auth: false },
        { kind: "build", command: "health deploy-everything", purpose: "x", requires_auth: false },
        { kind: "verify", command: "health verify", purpose: "ok", requires_auth: false },
      ],
    };
    stub.script({ content: JSON.stringify(hostile) });
    await using server = await startTestServer({ HEALTH_UPSTREAM_URL: stub.url });
    const plan = v.parse(planningResponseSchema, await (await postPlan(server.url, server.systemKey)).json());
    expect(plan.assistant_message.split("\n").length).toBeLessThanOrEqual(6);
    expect(plan.tool_plan.map((s) => s.blocked_reason === null)).toEqual([false, false, false, false, false, true]);
    for (const step of plan.tool_plan.slice(0, 5)) expect(step.blocked_reason).toEqual(expect.any(String));
  });

  test("500s become 502 after bounded retries, and failures are not cached", async () => {
    await using stub = startUpstreamStub();
    stub.script({ status: 500 }, { status: 503 });
    await using server = await startTestServer({ HEALTH_UPSTREAM_URL: stub.url, HEALTH_UPSTREAM_RETRIES: "1" });
    const response = await postPlan(server.url, server.systemKey);
    expect(response.status).toBe(502);
    const problem = await problemOf(response);
    expect(problem.code).toBe("upstream_error");
    expect(stub.calls.length).toBe(2);
    expect((await postPlan(server.url, server.systemKey)).status).toBe(200);
    expect(stub.calls.length).toBe(3);
  });

  test("a non-JSON reply is 502 and a slow upstream is 504", async () => {
    await using stub = startUpstreamStub();
    stub.script({ raw: "<html>gateway error</html>" }, { content: "no json here at all" });
    await using server = await startTestServer({
      HEALTH_UPSTREAM_URL: stub.url,
      HEALTH_UPSTREAM_RETRIES: "1",
      HEALTH_UPSTREAM_TIMEOUT_MS: "300",
    });
    expect((await postPlan(server.url, server.systemKey)).status).toBe(502);
    stub.script({ delayMs: 2_000 });
    const slow = await postPlan(server.url, server.systemKey, planningBody({ redacted_prompt: "verify my workspace" }));
    expect(slow.status).toBe(504);
    expect((await problemOf(slow)).code).toBe("upstream_timeout");
  });
});

describe("audit", () => {
  test("every answered call leaves one row: who, its audit id, cache status, latency and blocked steps", async () => {
    await using stub = startUpstreamStub();
    await using server = await startTestServer({ HEALTH_UPSTREAM_URL: stub.url });
    // A token, not the system key: its company, kind and id all differ, so a swapped column shows.
    const minted = mintToken(server, ["cli:run"]);
    const answers = [];
    for (const prompt of ["build an intake agent", "build an intake agent", "what dose of warfarin for my patient?"]) {
      const response = await postPlan(server.url, minted.token, planningBody({ redacted_prompt: prompt }));
      expect(response.status).toBe(200);
      answers.push(v.parse(planningResponseSchema, await response.json()));
    }
    await server.drain();
    const db = new Database(server.dbPath, { readonly: true });
    const all = db.query("SELECT * FROM plan_audit").all() as Array<Record<string, unknown>>;
    db.close();
    expect(all).toHaveLength(3);
    const rows = answers.map((answer) => all.find((row) => row.auditId === answer.audit_id));
    expect(rows[0]).toMatchObject({
      company: server.defaultOrg.slug,
      principalKind: "token",
      principalId: minted.id,
      intent: "build_agent",
      cache: "miss",
      blockedSteps: 0,
      status: 200,
    });
    expect(rows[0]?.upstreamLatencyMs).toBeTypeOf("number");
    expect(rows[1]).toMatchObject({ cache: "hit", upstreamLatencyMs: null });
    expect(rows[2]).toMatchObject({ intent: "clinical_blocked", cache: "bypass", upstreamLatencyMs: null });
    expect(rows.every((row) => typeof row?.requestId === "string" && typeof row.createdAt === "number")).toBe(true);
  });
});

describe("nothing leaks", () => {
  test("the database holds no prompt text, and logs carry no key or prompt", async () => {
    using dir = tempDir();
    const prompt = "build a fax intake loop for the unique-marker-7781 clinic";
    {
      await using server = await startTestServer({}, dir);
      expect((await postPlan(server.url, server.systemKey, planningBody({ redacted_prompt: prompt }))).status).toBe(
        200,
      );
      // The row is recorded after the response is sent: wait for it, then read the file.
      const db = new Database(server.dbPath, { readonly: true });
      let rows: unknown[] = [];
      for (const deadline = Date.now() + 5_000; rows.length === 0 && Date.now() < deadline; await Bun.sleep(10)) {
        await server.drain();
        rows = db.query("SELECT * FROM plan_audit").all();
      }
      db.close();
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ company: "system", intent: "build_agent", cache: "miss", status: 200 });
      expect(server.logs.join("\n")).not.toContain(server.systemKey);
    }
    for (const file of ["health.db", "health.db-wal"]) {
      const bytes = (() => {
        try {
          return readFileSync(`${dir}/${file}`, "latin1");
        } catch {
          return "";
        }
      })();
      expect(bytes).not.toContain("unique-marker-7781");
    }
  });
});
