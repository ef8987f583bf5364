/** Shared bench plumbing: start a target process, run wrk, parse its report. */
import type { Subprocess } from "bun";

export interface WrkResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
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
  const url = /READY (\S+)/.exec(seen)?.[1];
  if (!url) throw new Error(`target printed ${seen}`);
  reader.releaseLock();
  return {
    url,
    proc,
    async [Symbol.asyncDispose]() {
      proc.kill();
      await proc.exited;
    },
  };
}
