/** Shared bench plumbing: start a target process, run wrk, parse its report. */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { parseArgs } from "node:util";
import type { Subprocess } from "bun";

export interface WrkResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  /**
   * The server's CPU per request in microseconds while wrk ran, all its threads and its main
   * thread alone (the event loop, which bounds the throughput): when the target's pid is known
   * and /proc exists. Steadier than requests per second on a shared machine, since a neighbour
   * that slows the run mostly leaves the work per request alone.
   */
  cpu?: { allUs: number; mainUs: number };
}

/** Linux counts thread CPU time in ticks of 1/100 s (USER_HZ, 100 on every common build). */
const TICK_US = 10_000;

/** CPU ticks used so far by a process: every thread's, and its main thread's; null without /proc. */
export function cpuTicks(pid: number): { all: number; main: number } | null {
  let all = 0;
  let main = 0;
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return null;
  }
  for (const tid of tasks) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    } catch {
      continue; // a thread that ended between the listing and the read
    }
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    all += ticks;
    if (Number(tid) === pid) main = ticks;
  }
  return { all, main };
}

function toMs(value: string): number {
  const match = /^([\d.]+)(us|ms|s)$/.exec(value.trim());
  if (!match) return Number.NaN;
  const n = Number(match[1]);
  return match[2] === "us" ? n / 1000 : match[2] === "s" ? n * 1000 : n;
}

export async function wrk(
  url: string,
  options: { duration: number; connections: number; script?: string },
): Promise<WrkResult> {
  const args = ["wrk", "-t1", `-c${options.connections}`, `-d${options.duration}s`, "--latency"];
  if (options.script) args.push("-s", options.script);
  args.push(url);
  const proc = Bun.spawn(args, { stdout: "pipe", stderr: "pipe" });
  const out = await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error(`wrk failed: ${await new Response(proc.stderr).text()}`);
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out)?.[1];
  const p50 = /\s50%\s+(\S+)/.exec(out)?.[1];
  const p99 = /\s99%\s+(\S+)/.exec(out)?.[1];
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1];
  return {
    requestsPerSecond: Number(rps),
    p50Ms: toMs(p50 ?? ""),
    p99Ms: toMs(p99 ?? ""),
    non2xx: Number(non2xx ?? 0),
  };
}

export interface Target {
  url: string;
  /** What the target printed after its URL (seeded tokens, ids). */
  details: Record<string, string>;
  proc: Subprocess;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Spawns `bun <args>` and waits for it to print `READY <url>`. */
export async function startTarget(args: string[], env: Record<string, string> = {}): Promise<Target> {
  const proc = Bun.spawn([process.execPath, ...args], {
    stdout: "pipe",
    stderr: "inherit",
    env: { ...process.env, NODE_ENV: "production", ...env },
  });
  const reader = proc.stdout.getReader();
  let seen = "";
  while (!seen.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`target ${args.join(" ")} exited before it was ready`);
    seen += new TextDecoder().decode(value);
  }
  const ready = /READY (\S+) (.*)/.exec(seen);
  if (!ready?.[1]) throw new Error(`target printed ${seen}`);
  reader.releaseLock();
  return {
    url: ready[1],
    details: JSON.parse(ready[2] ?? "{}"),
    proc,
    async [Symbol.asyncDispose]() {
      proc.kill();
      await proc.exited;
    },
  };
}

/** Writes a wrk Lua script that sends one fixed request; returns its path. */
export function requestScript(
  name: string,
  request: { method: string; body?: string; headers?: Record<string, string> },
): string {
  const lines = [`wrk.method = ${JSON.stringify(request.method)}`];
  if (request.body !== undefined) lines.push(`wrk.body = ${JSON.stringify(request.body)}`);
  for (const [key, value] of Object.entries(request.headers ?? {})) {
    lines.push(`wrk.headers[${JSON.stringify(key)}] = ${JSON.stringify(value)}`);
  }
  const path = `${tmpdir()}/health-bench-${name}.lua`;
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

export function formatRow(name: string, r: WrkResult, baseline?: WrkResult): string {
  const ratio = baseline ? `${((r.requestsPerSecond / baseline.requestsPerSecond) * 100).toFixed(1)}%` : "";
  return `| ${name} | ${Math.round(r.requestsPerSecond).toLocaleString("en-US")} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} | ${r.non2xx} | ${ratio} |`;
}

export const TABLE_HEAD = "| target | req/s | p50 ms | p99 ms | non-2xx | of bare |\n|---|---|---|---|---|---|";

/**
 * Measures every target `rounds` times, interleaved (A B C A B C …), and keeps each target's
 * median round. On a shared 2-core machine the speed drifts within a run; interleaving spreads
 * the drift over all targets instead of penalising whichever ran last.
 */
export async function interleaved(
  targets: Array<{ url: string; script?: string; pid?: number }>,
  options: { duration: number; connections: number; rounds: number },
): Promise<WrkResult[]> {
  const results: WrkResult[][] = targets.map(() => []);
  for (let round = 0; round < options.rounds; round++) {
    for (const [i, target] of targets.entries()) {
      const before = target.pid === undefined ? null : cpuTicks(target.pid);
      const result = await wrk(target.url, { ...options, script: target.script });
      const after = target.pid === undefined ? null : cpuTicks(target.pid);
      if (before !== null && after !== null) {
        const requests = result.requestsPerSecond * options.duration;
        result.cpu = {
          allUs: ((after.all - before.all) * TICK_US) / requests,
          mainUs: ((after.main - before.main) * TICK_US) / requests,
        };
      }
      results[i]?.push(result);
    }
  }
  return results.map((runs) => {
    const sorted = [...runs].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
    const median = sorted[Math.floor(sorted.length / 2)];
    if (median === undefined) throw new Error("no rounds measured");
    return median;
  });
}

/** `--duration <s>` (3), `--connections <n>` (32), `--rounds <n>` (3) from the command line. */
export function benchOptions(): { duration: number; connections: number; rounds: number } {
  const { values } = parseArgs({
    options: {
      duration: { type: "string", default: "3" },
      connections: { type: "string", default: "32" },
      rounds: { type: "string", default: "3" },
    },
  });
  return { duration: Number(values.duration), connections: Number(values.connections), rounds: Number(values.rounds) };
}

/** The system key the gateway targets are started with, and a planning request a hit answers. */
export const BENCH_SYSTEM_KEY = "bench-system-key-0123456789abcdef";
export const PLANNING_HEADERS = { "Content-Type": "application/json", Authorization: `Bearer ${BENCH_SYSTEM_KEY}` };
export const PLANNING_BODY = JSON.stringify({
  session_id: "3b241101-e2bb-4255-8caf-4136c566a962",
  turn_id: "6ec0bd7f-11c0-43da-975e-2a8ad9ebae0b",
  redacted_prompt: "build an intake agent for our clinic's SMS line that routes forms to front-desk staff",
  intent: "build_agent",
  route_context: { hosted: true },
  safety_checks: ["developer-infrastructure-only"],
  workspace_manifest: null,
});
