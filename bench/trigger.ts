/**
 * Accepted durable triggers per second: POST /loop/{org}/{loop} with an API token, each 202
 * committed to SQLite before it is sent, next to a bare Bun.serve parsing the same body.
 * Runs execute in the background (one at a time) while the bench runs.
 *
 *   bun bench/trigger.ts [--duration 3] [--connections 32] [--rounds 3]
 */
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
} from "./wrk.ts";

const options = benchOptions();
const body = JSON.stringify({ form: "registration", source: "web", fields: { name: "A. Person" } });

await using bare = await startTarget(["bench/targets.ts", "bare"]);
await using gateway = await startTarget(["bench/targets.ts", "gateway"], {
  BENCH_LOOPS_DIR: join(import.meta.dir, "loops"),
});
const { loop = "", orgId = "" } = gateway.details;
const headers = { "Content-Type": "application/json", Authorization: `Bearer ${loop}` };
const script = requestScript("trigger", { method: "POST", body, headers });
const url = `${gateway.url}/loop/${orgId}/loop_noop`;

const first = await fetch(url, { method: "POST", headers, body });
if (first.status !== 202) throw new Error(`gateway answered ${first.status}`);
await wrk(`${bare.url}/`, { ...options, duration: 2, script });
await wrk(url, { ...options, duration: 2, script });

const [baseline, triggers] = (await interleaved(
  [
    { url: `${bare.url}/`, script },
    { url, script },
  ],
  options,
)) as [WrkResult, WrkResult];

console.log(
  `trigger: wrk -t1 -c${options.connections} -d${options.duration}s, median of ${options.rounds} interleaved rounds, loopback, ${navigator.hardwareConcurrency} cores`,
);
console.log(TABLE_HEAD);
console.log(formatRow("bare Bun.serve (POST, JSON parse)", baseline));
console.log(formatRow("durable trigger (202)", triggers, baseline));
