/** `health usage`: what the gateway did for your organization over a window, via tRPC usage.summary. */
import { defineCommand } from "citty";
import { COMPANY_PATTERN, LOOP_ID_PATTERN, TOKEN_ID_PATTERN } from "../../schema/ids.ts";
import { USAGE_WINDOW_NAMES, type UsageWindow } from "../../schema/admin.ts";
import { UsageError } from "../errors.ts";
import { jsonArg, serverArg } from "../lib/args.ts";
import { callServer, sessionFailure } from "../lib/api.ts";
import { requireSession } from "../lib/auth.ts";
import { out, print, printJson, printList } from "../lib/output.ts";

const WINDOW_WORDS: Record<UsageWindow, string> = {
  "1h": "the last hour",
  "24h": "the last 24 hours",
  "7d": "the last 7 days",
  "30d": "the last 30 days",
};

export default defineCommand({
  meta: {
    name: "usage",
    description: `Show what the gateway did for your organization over a window: planning calls, cache hit
rate, clinical blocks, rate-limit refusals (429), upstream errors and timeouts, latency (p50, p95,
p99; the gateway's own time and the upstream's), runs started, completed, errored, in flight and
queued, run duration, and the loops that fail most, each with the command that lists those runs.
Counts and ids only: no prompt is ever stored or shown. Needs an admin session (health login).

Windows: ${USAGE_WINDOW_NAMES.join(", ")} (default 24h). --company narrows the planning calls,
--loop the runs, --token both.

Examples:
  health usage
  health usage --window 7d --loop loop_intake
  health usage --window 1h --token tok_… --json`,
  },
  args: {
    window: { type: "string", description: `How far back: ${USAGE_WINDOW_NAMES.join(", ")}`, valueHint: "window" },
    token: { type: "string", description: "Only what this API token did (tok_…)", valueHint: "token_id" },
    loop: { type: "string", description: "Only the runs of this loop (loop_…)", valueHint: "loop_id" },
    company: { type: "string", description: "Only planning calls attributed to this company", valueHint: "slug" },
    ...serverArg,
    ...jsonArg,
  },
  async run({ args }) {
    const window = USAGE_WINDOW_NAMES.find((w) => w === (args.window ?? "24h"));
    if (window === undefined) throw new UsageError(`--window must be one of ${USAGE_WINDOW_NAMES.join(", ")}`);
    if (args.token !== undefined && !TOKEN_ID_PATTERN.test(args.token)) {
      throw new UsageError(`--token must be a token id (tok_…, see health tokens list); got "${args.token}"`);
    }
    if (args.loop !== undefined && !LOOP_ID_PATTERN.test(args.loop)) {
      throw new UsageError(`--loop must be a loop id (loop_…); got "${args.loop}"`);
    }
    if (args.company !== undefined && !COMPANY_PATTERN.test(args.company)) {
      throw new UsageError(`--company must be a slug of lower-case letters, digits and dashes; got "${args.company}"`);
    }
    const { server, client } = requireSession(args.server);
    const input = { window, tokenId: args.token, loopId: args.loop, company: args.company };
    const usage = await callServer(server, () => client.usage.summary.query(input), sessionFailure);
    if (args.json === true) {
      printJson(usage);
      return;
    }

    const s = out();
    const n = (value: number) => value.toLocaleString("en-US");
    const ms = (value: number | null) =>
      value === null ? "–" : value >= 1000 ? `${(value / 1000).toFixed(value >= 10_000 ? 0 : 1)} s` : `${value} ms`;
    const narrowed = [
      args.token && `token ${args.token}`,
      args.loop && `loop ${args.loop}`,
      args.company && `company ${args.company}`,
    ].filter(Boolean);
    print(s.bold(`Usage over ${WINDOW_WORDS[window]}${narrowed.length > 0 ? ` (${narrowed.join(", ")})` : ""}`));
    const p = usage.planning;
    const step = usage.stepMs >= 3_600_000 ? `${usage.stepMs / 3_600_000} h` : `${usage.stepMs / 60_000} min`;
    print();
    print(s.bold("Planning"));
    print(
      `  requests         ${n(p.requests)}   ${s.dim(`${sparkline(usage.series.requests)} (one mark per ${step})`)}`,
    );
    print(
      `  cache hit rate   ${p.cacheHitRate === null ? "–" : `${Math.round(p.cacheHitRate * 100)}%`} (${n(p.cacheHits)} hits)`,
    );
    print(`  clinical blocks  ${n(p.clinicalBlocks)}`);
    print(`  rate limited     ${n(p.rateLimited)}`);
    print(`  upstream         ${n(p.upstreamErrors)} errors, ${n(p.upstreamTimeouts)} timeouts`);
    print(`  gateway time     p50 ${ms(p.gatewayMs.p50)}  p95 ${ms(p.gatewayMs.p95)}  p99 ${ms(p.gatewayMs.p99)}`);
    print(`  upstream time    p50 ${ms(p.upstreamMs.p50)}  p95 ${ms(p.upstreamMs.p95)}  p99 ${ms(p.upstreamMs.p99)}`);
    const r = usage.runs;
    print();
    print(s.bold("Runs"));
    print(`  started          ${n(r.started)}   ${s.dim(sparkline(usage.series.runsStarted))}`);
    print(`  completed        ${n(r.completed)}`);
    print(`  errored          ${r.errored > 0 ? s.red(n(r.errored)) : "0"}`);
    print(`  in flight        ${n(r.inFlight)}   queued ${n(r.queued)}`);
    print(`  duration         p50 ${ms(r.durationMs.p50)}  p95 ${ms(r.durationMs.p95)}`);
    if (r.failingLoops.length > 0) {
      print();
      print(s.bold("Loops that fail most"));
      printList(r.failingLoops, {
        empty: "",
        header: ["LOOP", "ERRORED", "COMPLETED", "SEE"],
        row: (loop) => [
          loop.loopId,
          n(loop.errored),
          n(loop.completed),
          `health runs list --loop ${loop.loopId} --status errored`,
        ],
      });
    }
  },
});

const MARKS = "▁▂▃▄▅▆▇█";

/** One mark per point, scaled to the largest; a blank window is a flat line. */
export function sparkline(values: readonly number[]): string {
  const max = Math.max(0, ...values);
  return values.map((value) => (max === 0 ? MARKS[0] : MARKS[Math.min(7, Math.round((value / max) * 7))])).join("");
}
