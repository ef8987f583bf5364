/**
 * OpenTelemetry traces against a real OTLP/HTTP receiver on loopback that decodes what it gets:
 * a planning call is one span with a child per plugin and one for the upstream call, under the
 * caller's traceparent; a traced trigger yields one connected trace from the request to the run
 * and its every step attempt. Without an endpoint nothing is traced.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parseTraceparent } from "../http/traceparent.ts";
import { FIXTURE_LOOPS_DIR } from "./support/loops.ts";
import { planningBody, postPlan } from "./support/planning.ts";
import { mintToken, startTestServer, type TestServer } from "./support/server.ts";
import { startUpstreamStub, type UpstreamStub } from "./support/upstream-stub.ts";

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  status?: { code?: number };
}

/** An OTLP/HTTP JSON receiver: every span it was sent, and the resources they came with. */
function startReceiver() {
  const spans: OtlpSpan[] = [];
  const resources: Array<Record<string, unknown>> = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      if (request.method !== "POST" || new URL(request.url).pathname !== "/v1/traces") {
        return new Response("not found", { status: 404 });
      }
      expect(request.headers.get("content-type")).toContain("application/json");
      const body = (await request.json()) as {
        resourceSpans: Array<{ resource: Record<string, unknown>; scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
      };
      for (const r of body.resourceSpans) {
        resources.push(r.resource);
        for (const scope of r.scopeSpans) spans.push(...scope.spans);
      }
      return Response.json({});
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, spans, resources, stop: () => server.stop(true) };
}

const attribute = (span: OtlpSpan | undefined, key: string) => {
  const value = span?.attributes.find((a) => a.key === key)?.value;
  return value === undefined ? undefined : Object.values(value)[0];
};

async function until<T>(probe: () => T | undefined, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

let receiver: ReturnType<typeof startReceiver>;
let stub: UpstreamStub;
let server: TestServer;

beforeAll(async () => {
  receiver = startReceiver();
  stub = startUpstreamStub();
  server = await startTestServer({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_SERVICE_NAME: "health-under-test",
    HEALTH_UPSTREAM_URL: stub.url,
    HEALTH_LOOPS_DIR: FIXTURE_LOOPS_DIR,
  });
});

afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
  await stub?.[Symbol.asyncDispose]();
  receiver?.stop();
});

describe("traces over OTLP/HTTP", () => {
  test("a planning call: one server span under the caller's traceparent, a child per plugin and the upstream call", async () => {
    const token = mintToken(server, ["cli:run"]).token;
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const callerSpan = "00f067aa0ba902b7";
    const response = await postPlan(server.url, token, planningBody({ redacted_prompt: "build a fax router" }), {
      traceparent: `00-${traceId}-${callerSpan}-01`,
    });
    expect(response.status).toBe(200);
    const requestId = response.headers.get("x-request-id");

    const root = await until(
      () => receiver.spans.find((s) => attribute(s, "health.request_id") === requestId),
      "the request span",
    );
    expect(root).toMatchObject({ traceId, parentSpanId: callerSpan, name: "POST /cli/code/sessions", kind: 2 });
    expect(attribute(root, "http.response.status_code")).toBe(200);
    const children = await until(() => {
      const found = receiver.spans.filter((s) => s.parentSpanId === root.spanId);
      return found.length >= 6 ? found : undefined;
    }, "the plugin spans");
    expect(children.map((s) => s.name).sort()).toEqual(
      ["auth", "cache", "planning", "rate-limit", "safety-gate", "sanitizer"].sort(),
    );
    const planning = children.find((s) => s.name === "planning");
    const upstream = await until(
      () => receiver.spans.find((s) => s.parentSpanId === planning?.spanId),
      "the upstream span",
    );
    expect(upstream).toMatchObject({ traceId, name: "upstream chat completion", kind: 3 });
    // Children sit inside their parent's time.
    for (const child of [...children, upstream]) {
      expect(BigInt(child.startTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(root.startTimeUnixNano));
      expect(BigInt(child.endTimeUnixNano)).toBeLessThanOrEqual(BigInt(root.endTimeUnixNano));
    }
    expect(JSON.stringify(receiver.resources)).toContain("health-under-test");
    // No prompt and no token in anything sent.
    expect(JSON.stringify(receiver.spans)).not.toContain("fax router");
    expect(JSON.stringify(receiver.spans)).not.toContain(token);
  });

  test("a traced trigger: one connected trace from the request to the run and every step attempt", async () => {
    const token = mintToken(server, ["loop:run"]).token;
    const traceId = "0af7651916cd43dd8448eb211c80319c";
    const response = await fetch(`${server.url}/loop/${server.defaultOrg.id}/loop_flaky`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        traceparent: `00-${traceId}-b7ad6b7169203331-01`,
      },
      body: JSON.stringify({ failures: 1 }),
    });
    expect(response.status).toBe(202);
    const { runId } = (await response.json()) as { runId: string };

    const run = await until(() => receiver.spans.find((s) => attribute(s, "health.run_id") === runId), "the run span");
    const request = receiver.spans.find((s) => s.spanId === run.parentSpanId);
    expect(request).toMatchObject({ traceId, name: "POST /loop/:orgId/:loopId" });
    expect(run).toMatchObject({ traceId, name: "run loop_flaky" });
    expect(attribute(run, "health.run.status")).toBe("complete");
    const steps = receiver.spans.filter((s) => s.parentSpanId === run.spanId);
    // The flaky step fails once and then succeeds: both attempts are in the trace, in order (status
    // code 2 is ERROR, 0 UNSET).
    const attempts = steps
      .sort((a, b) => Number(BigInt(a.startTimeUnixNano) - BigInt(b.startTimeUnixNano)))
      .map((s) => [s.name, attribute(s, "health.step.attempt"), attribute(s, "health.step.status"), s.status?.code]);
    expect(attempts).toEqual([
      ["step call", 1, "errored", 2],
      ["step call", 2, "complete", 0],
    ]);
    for (const step of steps) expect(step.traceId).toBe(traceId);
  });

  test("traceparent headers are parsed strictly", () => {
    expect(parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")).toMatchObject({
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      spanId: "00f067aa0ba902b7",
      traceFlags: 1,
    });
    for (const bad of [null, "", "garbage", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"]) {
      expect(parseTraceparent(bad)).toBeNull();
    }
    expect(parseTraceparent(`00-${"0".repeat(32)}-00f067aa0ba902b7-01`)).toBeNull();
  });
});

test("without an OTLP endpoint nothing is traced and no traceparent is stored", async () => {
  await using plain = await startTestServer({ HEALTH_LOOPS_DIR: FIXTURE_LOOPS_DIR });
  const token = mintToken(plain, ["loop:run"]).token;
  const response = await fetch(`${plain.url}/loop/${plain.defaultOrg.id}/loop_echo`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    },
  });
  expect(response.status).toBe(202);
  const { runId } = (await response.json()) as { runId: string };
  const { Database } = await import("bun:sqlite");
  const db = new Database(plain.dbPath, { readonly: true });
  try {
    expect(db.query("SELECT traceparent FROM runs WHERE id = ?").get(runId)).toEqual({ traceparent: null });
  } finally {
    db.close();
  }
});
