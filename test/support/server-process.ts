/**
 * The real server (`bun server/main.ts`) as a child process, the way an operator runs several
 * instances: its own process, the environment as configuration, a random port. Its output goes
 * to a file in `dir` (read for the address it prints); stopped with SIGTERM on dispose.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");

export interface ServerProcess {
  url: string;
  /** Everything it printed so far. */
  output(): string;
  /** SIGKILL, as a crash or an OOM killer would: nothing is flushed or handed back. */
  kill(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export async function startServerProcess(
  dir: string,
  name: string,
  env: Record<string, string>,
): Promise<ServerProcess> {
  const log = join(dir, `${name}.log`);
  const proc = Bun.spawn([process.execPath, "server/main.ts"], {
    cwd: ROOT,
    env: { ...process.env, PORT: "0", ...env },
    stdout: Bun.file(log),
    stderr: "inherit",
  });
  const output = () => (existsSync(log) ? readFileSync(log, "utf8") : "");
  const deadline = Date.now() + 20_000;
  let url: string | undefined;
  while (url === undefined) {
    url = /listening on (\S+)/.exec(output())?.[1];
    if (url !== undefined) break;
    if (proc.exitCode !== null) throw new Error(`${name} exited with ${proc.exitCode}: ${output()}`);
    if (Date.now() > deadline) {
      proc.kill(9);
      throw new Error(`${name} did not start: ${output()}`);
    }
    await Bun.sleep(20);
  }
  return {
    url,
    output,
    async kill() {
      proc.kill(9);
      await proc.exited;
    },
    async [Symbol.asyncDispose]() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}
