/**
 * Latency the gateway adds at a fixed request rate: the planning cache hit (every plugin, audit,
 * metrics and usage on) next to a bare Bun.serve answering the same bytes, both driven at 1,000 and
 * 2,000 requests per second by `hey` (apt-get install hey), which paces its workers. wrk measures
 * what a server does flat out; this measures what a request waits at a load the server carries.
 *
 *   bun bench/latency.ts [--duration 8] [--rounds 2]
 */
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { BENCH_SYSTEM_KEY, PLANNING_BODY, PLANNING_HEADERS, startTarget } from "./wrk.ts";

const { values } = parseArgs({
  options: { duration: { type: "string", default: "8" }, rounds: { type: "string", default: "2" } },
});
const duration = Number(values.duration);
const rounds = Number(values.rounds);
const RATES = [1_000, 2_000];
const WORKERS = 20;

const body = PLANNING_BODY;

interface Latency {
  p50Ms: number;
  p99Ms: number;
  rps: number;
}

async function hey(url: string, rate: number): Promise<Latency> {
  const args = ["hey", "-z", `${duration}s`, "-c", String(WORKERS), "-q", String(rate / WORKERS), "-m", "POST"];
  args.push("-T", "application/json", "-H", `Authorization: Bearer ${BENCH_SYSTEM_KEY}`, "-d", body, url);
  const proc = Bun.spawn(args, { stdout: "pipe", stderr: "pipe" });
  const out = await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error(`hey failed: ${await new Response(proc.stderr).text()}`);
  const seconds = (label: string) => Number(new RegExp(`${label}% in ([\\d.]+) secs`).exec(out)?.[1] ?? Number.NaN);
  const statuses = /\[(\d{3})\]\s+\d+ responses/g;
  for (const match of out.matchAll(statuses)) if (match[1] !== "200") throw new Error(`non-200 answers: ${out}`);
  return {
    p50Ms: seconds("50") * 1000,
    p99Ms: seconds("99") * 1000,
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? Number.NaN),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

await using gateway = await startTarget(["bench/targets.ts", "gateway"], { HEALTH_SYSTEM_KEY: BENCH_SYSTEM_KEY });
const headers = PLANNING_HEADERS;
await fetch(`${gateway.url}/cli/code/sessions`, { method: "POST", headers, body });
const hit = await fetch(`${gateway.url}/cli/code/sessions`, { method: "POST", headers, body });
if (hit.headers.get("x-health-cache") !== "hit") throw new Error(`gateway answered ${hit.status} without a cache hit`);
const sameBytes = join(tmpdir(), "health-bench-latency-response.json");
writeFileSync(sameBytes, JSON.stringify({ body: await hit.text(), headers: Object.fromEntries(hit.headers) }));
await using same = await startTarget(["bench/targets.ts", "bare-same"], { BENCH_RESPONSE: sameBytes });

const targets = { bare: `${same.url}/`, gateway: `${gateway.url}/cli/code/sessions` };
// Warm both JITs at the lower rate.
for (const url of Object.values(targets)) await hey(url, RATES[0] as number);

console.log(
  `latency at a fixed rate: hey, ${WORKERS} paced workers, ${duration} s, median of ${rounds} interleaved rounds, ${navigator.hardwareConcurrency} cores`,
);
console.log("| rate | bare p50 ms | bare p99 ms | gateway p50 ms | gateway p99 ms | added p50 ms | added p99 ms |");
console.log("|---|---|---|---|---|---|---|");
for (const rate of RATES) {
  const seen: Record<keyof typeof targets, Latency[]> = { bare: [], gateway: [] };
  for (let round = 0; round < rounds; round++) {
    for (const name of ["bare", "gateway"] as const) seen[name].push(await hey(targets[name], rate));
  }
  const p = (name: keyof typeof targets, key: "p50Ms" | "p99Ms") => median(seen[name].map((l) => l[key]));
  const cells = [p("bare", "p50Ms"), p("bare", "p99Ms"), p("gateway", "p50Ms"), p("gateway", "p99Ms")];
  const added = [p("gateway", "p50Ms") - p("bare", "p50Ms"), p("gateway", "p99Ms") - p("bare", "p99Ms")];
  console.log(`| ${rate.toLocaleString("en-US")}/s | ${[...cells, ...added].map((v) => v.toFixed(2)).join(" | ")} |`);
}
