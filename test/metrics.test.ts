/**
 * `GET /metrics` on a real server after real traffic: only the system key reads it, and what it
 * serves parses as the Prometheus text format with the figures the traffic should have moved.
 */
import { expect, test } from "bun:test";
// @ts-expect-error: the parser ships no types; it returns [{ name, type, help, metrics: [{ value?, labels?, buckets? }] }]
import parsePrometheus from "parse-prometheus-text-format";
import { planningBody, postPlan } from "./support/planning.ts";
import { mintToken, startTestServer } from "./support/server.ts";

interface Family {
  name: string;
  type: string;
  metrics: Array<{ value?: string; labels?: Record<string, string>; buckets?: Record<string, string>; count?: string }>;
}

test("/metrics: system key only, Prometheus text, counting what happened", async () => {
  await using server = await startTestServer();
  const token = mintToken(server, ["cli:run"]).token;
  for (const prompt of ["build an intake agent", "build an intake agent", "what dose of warfarin should I take?"]) {
    expect((await postPlan(server.url, token, planningBody({ redacted_prompt: prompt }))).status).toBe(200);
  }
  expect((await fetch(`${server.url}/cli/code/sessions`, { method: "POST" })).status).toBe(401);

  const anonymous = await fetch(`${server.url}/metrics`);
  expect(anonymous.status).toBe(401);
  const withToken = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  expect(withToken.status).toBe(403);

  const response = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${server.systemKey}` } });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toStartWith("text/plain; version=0.0.4");
  const text = await response.text();
  const families: Family[] = parsePrometheus(text);
  const family = (name: string) => families.find((f) => f.name === name);
  const value = (name: string, labels: Record<string, string> = {}) =>
    Number(
      family(name)?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))?.value ??
        Number.NaN,
    );

  expect(value("health_http_requests_total", { route: "/cli/code/sessions", method: "POST", status: "200" })).toBe(3);
  expect(value("health_http_requests_total", { route: "/cli/code/sessions", method: "POST", status: "401" })).toBe(1);
  expect(value("health_plan_cache_total", { result: "miss" })).toBe(1);
  expect(value("health_plan_cache_total", { result: "hit" })).toBe(1);
  expect(value("health_clinical_blocks_total")).toBe(1);
  expect(family("health_http_request_duration_seconds")?.type).toBe("HISTOGRAM");
  expect(value("health_plugin_calls_total", { plugin: "safety-gate" })).toBe(3);
  expect(value("health_plugin_seconds_total", { plugin: "safety-gate" })).toBeGreaterThan(0);
  // (The parser folds a histogram's label sets together: one series is read off the text.)
  expect(text).toMatch(/^health_http_request_duration_seconds_count\{route="\/cli\/code\/sessions"\} 4$/m);
  for (const status of ["queued", "running", "sleeping"]) expect(value("health_runs", { status })).toBe(0);
  expect(value("health_loop_runs_in_flight")).toBe(0);
  expect(family("health_process_resident_memory_bytes")?.type).toBe("GAUGE");
  expect(family("health_nodejs_eventloop_lag_seconds")?.type).toBe("GAUGE");
  // No id, company, token or prompt in any label.
  expect(text).not.toContain(token);
  expect(text).not.toContain("warfarin");
  expect(text).not.toMatch(/run_[A-Za-z0-9]{24}|org_[A-Za-z0-9]{24}/);
});
