/**
 * Planning cache-hit throughput through every plugin, next to a bare Bun.serve measured in
 * the same run on the same machine. Needs `wrk` (apt-get install wrk).
 *
 *   bun bench/planning.ts [--duration 5] [--connections 32]
 */
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { wrk, startTarget, type WrkResult } from "./wrk.ts";

const { values } = parseArgs({
  options: { duration: { type: "string", default: "5" }, connections: { type: "string", default: "32" } },
});

const systemKey = "bench-system-key-0123456789abcdef";
const body = JSON.stringify({
  session_id: "3b241101-e2bb-4255-8caf-4136c566a962",
  turn_id: "6ec0bd7f-11c0-43da-975e-2a8ad9ebae0b",
  redacted_prompt: "build an intake agent for our clinic's SMS line that routes forms to front-desk staff",
  intent: "build_agent",
  route_context: { hosted: true },
  safety_checks: ["developer-infrastructure-only"],
  workspace_manifest: null,
});
const script = join(tmpdir(), "health-bench-planning.lua");
writeFileSync(
  script,
  `wrk.method = "POST"\nwrk.body = ${JSON.stringify(body)}\nwrk.headers["Content-Type"] = "application/json"\nwrk.headers["Authorization"] = "Bearer ${systemKey}"\n`,
);

const options = { duration: Number(values.duration), connections: Number(values.connections), script };

await using bare = await startTarget(["bench/targets.ts", "bare"]);
await using gateway = await startTarget(["bench/targets.ts", "gateway"], { HEALTH_SYSTEM_KEY: systemKey });

// Warm the cache (and both JITs) so the measured path is the cache hit.
const warm = await fetch(`${gateway.url}/cli/code/sessions`, {
  method: "POST",
  headers: { "content-type": "application/json", authorization: `Bearer ${systemKey}` },
  body,
});
if (warm.status !== 200) throw new Error(`gateway answered ${warm.status}`);
await wrk(`${bare.url}/`, { ...options, duration: 2 });
await wrk(`${gateway.url}/cli/code/sessions`, { ...options, duration: 2 });

const baseline = await wrk(`${bare.url}/`, options);
const planning = await wrk(`${gateway.url}/cli/code/sessions`, options);

const row = (name: string, r: WrkResult) =>
  `| ${name} | ${Math.round(r.requestsPerSecond).toLocaleString("en-US")} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} | ${r.non2xx} |`;
console.log(`wrk -t1 -c${options.connections} -d${options.duration}s, loopback, ${navigator.hardwareConcurrency} cores`);
console.log("| target | req/s | p50 ms | p99 ms | non-2xx |");
console.log("|---|---|---|---|---|");
console.log(row("bare Bun.serve (POST, JSON parse)", baseline));
console.log(row("planning cache hit, all plugins", planning));
console.log(
  `ratio: ${((planning.requestsPerSecond / baseline.requestsPerSecond) * 100).toFixed(1)}% of bare req/s; p99 added ${(planning.p99Ms - baseline.p99Ms).toFixed(2)} ms`,
);
