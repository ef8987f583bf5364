/**
 * Planning cache-hit throughput through every plugin, next to a bare Bun.serve measured in
 * the same run on the same machine. Needs `wrk` (apt-get install wrk).
 *
 *   bun bench/planning.ts [--duration 3] [--connections 32] [--rounds 3]
 */
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  benchOptions,
  formatRow,
  interleaved,
  requestScript,
  startTarget,
  TABLE_HEAD,
  type WrkResult,
  wrk,
  BENCH_SYSTEM_KEY,
  PLANNING_BODY,
  PLANNING_HEADERS,
} from "./wrk.ts";

const options = benchOptions();

const body = PLANNING_BODY;
const headers = PLANNING_HEADERS;
const script = requestScript("planning", { method: "POST", body, headers });

await using bare = await startTarget(["bench/targets.ts", "bare"]);
await using gateway = await startTarget(["bench/targets.ts", "gateway"], { HEALTH_SYSTEM_KEY: BENCH_SYSTEM_KEY });

// Warm the cache (and both JITs) so the measured path is the cache hit.
await fetch(`${gateway.url}/cli/code/sessions`, { method: "POST", headers, body });
const hit = await fetch(`${gateway.url}/cli/code/sessions`, { method: "POST", headers, body });
if (hit.status !== 200 || hit.headers.get("x-health-cache") !== "hit")
  throw new Error(`gateway answered ${hit.status}`);
const sameBytes = join(tmpdir(), "health-bench-response.json");
writeFileSync(sameBytes, JSON.stringify({ body: await hit.text(), headers: Object.fromEntries(hit.headers) }));
await using same = await startTarget(["bench/targets.ts", "bare-same"], { BENCH_RESPONSE: sameBytes });
await using floor = await startTarget(["bench/targets.ts", "elysia-floor"], { BENCH_RESPONSE: sameBytes });

const targets = [
  { url: `${bare.url}/`, pid: bare.proc.pid },
  { url: `${same.url}/`, pid: same.proc.pid },
  { url: `${floor.url}/cli/code/sessions`, pid: floor.proc.pid },
  { url: `${gateway.url}/cli/code/sessions`, pid: gateway.proc.pid },
];
for (const { url } of targets) await wrk(url, { ...options, duration: 2, script });

const [baseline, sameResponse, framework, planning] = (await interleaved(
  targets.map((target) => ({ ...target, script })),
  options,
)) as [WrkResult, WrkResult, WrkResult, WrkResult];

console.log(
  `planning: wrk -t1 -c${options.connections} -d${options.duration}s, median of ${options.rounds} interleaved rounds, loopback, ${navigator.hardwareConcurrency} cores`,
);
console.log(TABLE_HEAD);
console.log(formatRow("bare Bun.serve (POST, JSON parse)", baseline));
console.log(formatRow("bare Bun.serve, the gateway's response bytes and headers", sameResponse, baseline));
console.log(formatRow("Elysia, the planning route's hooks doing nothing (framework floor)", framework, baseline));
console.log(formatRow("planning cache hit, all plugins", planning, baseline));
console.log(
  `cache hit vs same-bytes bare: ${((planning.requestsPerSecond / sameResponse.requestsPerSecond) * 100).toFixed(1)}%`,
);
console.log(
  `cache hit vs framework floor: ${((planning.requestsPerSecond / framework.requestsPerSecond) * 100).toFixed(1)}%`,
);
console.log(`p99 added: ${(planning.p99Ms - baseline.p99Ms).toFixed(2)} ms`);
// CPU per request (of each target's median round): the work behind the ratios above, steadier
// than them when a neighbour slows the machine.
const cpu = (r: WrkResult) =>
  r.cpu === undefined ? "n/a" : `${r.cpu.mainUs.toFixed(2)} µs on the event loop, ${r.cpu.allUs.toFixed(2)} µs in all`;
console.log(
  `server CPU per request: same-bytes bare ${cpu(sameResponse)}; floor ${cpu(framework)}; cache hit ${cpu(planning)}`,
);
if (sameResponse.cpu !== undefined && planning.cpu !== undefined) {
  console.log(
    `same-bytes bare / cache hit, event-loop CPU per request: ${((sameResponse.cpu.mainUs / planning.cpu.mainUs) * 100).toFixed(1)}%`,
  );
}
