/**
 * Token verification cost per request: a valid, a revoked and a malformed token on
 * GET /cli/account, next to the gateway with no auth (/healthz) and a bare Bun.serve, with
 * 10 and with 100,000 tokens in the table (the lookup must stay O(1)).
 *
 *   bun bench/tokens.ts [--duration 4] [--connections 32]
 */
import { parseArgs } from "node:util";
import { formatRow, requestScript, startTarget, TABLE_HEAD, type WrkResult, wrk } from "./wrk.ts";

const { values } = parseArgs({
  options: { duration: { type: "string", default: "4" }, connections: { type: "string", default: "32" } },
});
const options = { duration: Number(values.duration), connections: Number(values.connections) };
const bearer = (name: string, token: string) =>
  requestScript(name, { method: "GET", headers: { Authorization: `Bearer ${token}` } });

await using bare = await startTarget(["bench/targets.ts", "bare"]);
await wrk(`${bare.url}/`, { ...options, duration: 2 });
const baseline = await wrk(`${bare.url}/`, options);
const rows: string[] = [formatRow("bare Bun.serve (GET)", baseline)];

for (const size of [10, 100_000]) {
  await using gateway = await startTarget(["bench/targets.ts", "gateway"], { BENCH_TOKENS: String(size) });
  const { valid = "", revoked = "" } = gateway.details;
  const account = `${gateway.url}/cli/account`;
  await wrk(account, { ...options, duration: 2, script: bearer("valid", valid) });
  const cases: Array<[string, () => Promise<WrkResult>]> = [
    ["no auth (/healthz)", () => wrk(`${gateway.url}/healthz`, options)],
    ["valid token", () => wrk(account, { ...options, script: bearer("valid", valid) })],
    ["revoked token (401)", () => wrk(account, { ...options, script: bearer("revoked", revoked) })],
    ["malformed token (401)", () => wrk(account, { ...options, script: bearer("malformed", "hlth_not-a-token") })],
  ];
  for (const [name, run] of cases)
    rows.push(formatRow(`${size.toLocaleString("en-US")} tokens: ${name}`, await run(), baseline));
}

console.log(
  `tokens: wrk -t1 -c${options.connections} -d${options.duration}s, loopback, ${navigator.hardwareConcurrency} cores`,
);
console.log(TABLE_HEAD);
for (const row of rows) console.log(row);
