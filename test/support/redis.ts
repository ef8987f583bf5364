/**
 * A real `redis-server` on a random loopback port in a temp dir, with no persistence, stopped
 * with `await using`. `stop()` and `start()` keep the port, so a test can take Redis away in the
 * middle and bring it back where the gateway expects it. Without Debian's `redis-server` on the
 * PATH the Redis tests skip, saying so (`.ci/run` installs it).
 */
import { atProcessEnd, freePort } from "./process-end.ts";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { RedisClient } from "bun";
import { tempDir } from "./temp-dir.ts";

export const REDIS_SERVER = Bun.which("redis-server");

/** `describe.skipIf(!hasRedis)`, with one visible line per file that skips. */
export const hasRedis = REDIS_SERVER !== null;

export function warnIfNoRedis(what: string): void {
  if (!hasRedis) console.warn(`redis-server not found on PATH: skipping ${what} (apt-get install redis-server)`);
}

export interface TestRedis {
  url: string;
  port: number;
  /** SIGTERM and wait; the port stays this Redis's. */
  stop(): Promise<void>;
  /** Starts again on the same port (empty: nothing is saved). */
  start(): Promise<void>;
  /** SIGSTOP / SIGCONT: a Redis that keeps its socket open and stops answering. */
  pause(): void;
  resume(): void;
  /** A plain client of its own, for looking at keys from the outside. */
  client(): RedisClient;
  [Symbol.asyncDispose](): Promise<void>;
}

// A test that fails before disposing, or a test run stopped by a signal, must not leave a
// redis-server behind (process-end.ts).
const live = new Set<Bun.Subprocess>();
const killLive = () => {
  for (const proc of live) proc.kill(9);
};

async function launch(dir: string, port: number): Promise<Bun.Subprocess> {
  if (REDIS_SERVER === null) throw new Error("redis-server is not installed");
  const log = join(dir, `redis-${port}.log`);
  const logText = () => (existsSync(log) ? readFileSync(log, "utf8") : "");
  // Logged once per start; counted, since a restart appends to the same file.
  const readyLines = (text: string) => text.match(/Ready to accept connections/g)?.length ?? 0;
  const before = readyLines(logText());
  const proc = Bun.spawn(
    [
      REDIS_SERVER,
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--dir",
      dir,
      "--logfile",
      log,
    ],
    { stdout: "ignore", stderr: "ignore" },
  );
  const deadline = Date.now() + 10_000;
  for (;;) {
    const text = logText();
    if (readyLines(text) > before) {
      live.add(proc);
      atProcessEnd(killLive);
      void proc.exited.then(() => live.delete(proc));
      return proc;
    }
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill(9);
      throw new Error(`redis-server on port ${port} did not start: ${text.split("\n").slice(-3).join(" ")}`);
    }
    await Bun.sleep(10);
  }
}

export async function startRedis(): Promise<TestRedis> {
  const dir = tempDir("health-redis-");
  let port = freePort();
  let proc: Bun.Subprocess | undefined;
  // Another process may take the probed port before redis-server binds it: try a few.
  for (let attempt = 0; proc === undefined; attempt++) {
    try {
      proc = await launch(dir, port);
    } catch (error) {
      if (attempt === 4) throw error;
      port = freePort();
    }
  }
  let running: Bun.Subprocess | undefined = proc;
  const url = `redis://127.0.0.1:${port}`;
  const clients: RedisClient[] = [];
  const stop = async () => {
    const current = running;
    running = undefined;
    if (current === undefined) return;
    current.kill("SIGCONT");
    current.kill("SIGTERM");
    await current.exited;
  };
  return {
    url,
    port,
    stop,
    async start() {
      if (running === undefined) running = await launch(dir, port);
    },
    pause() {
      running?.kill("SIGSTOP");
    },
    resume() {
      running?.kill("SIGCONT");
    },
    client() {
      const client = new RedisClient(url);
      clients.push(client);
      return client;
    },
    async [Symbol.asyncDispose]() {
      for (const client of clients) client.close();
      await stop();
      dir[Symbol.dispose]();
    },
  };
}
