/**
 * A real PostgreSQL server on a random loopback port in a temp dir (initdb, then pg_ctl), stopped
 * with `await using`; each suite creates its own database on it. Without Debian's `postgresql`
 * (initdb, pg_ctl) the PostgreSQL tests skip, saying so (`.ci/run` installs it).
 *
 * PostgreSQL refuses to run as root, and CI runs as root: there the binaries run as the
 * `postgres` user the Debian package creates (`runuser -u postgres --`), in a directory handed to
 * it. It is a throwaway cluster: trust authentication on loopback only, and no fsync.
 */
import { atProcessEnd, freePort } from "./process-end.ts";
import { existsSync, readdirSync, readFileSync, chownSync } from "node:fs";
import { join } from "node:path";
import { SQL } from "bun";
import { tempDir } from "./temp-dir.ts";

/** Debian keeps the server binaries off the PATH, under /usr/lib/postgresql/<major>/bin. */
function findBinDir(): string | null {
  const onPath = Bun.which("pg_config");
  if (onPath !== null) {
    const dir = Bun.spawnSync([onPath, "--bindir"]).stdout.toString().trim();
    if (existsSync(join(dir, "initdb"))) return dir;
  }
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const majors = readdirSync(root)
      .filter((name) => /^\d+$/.test(name) && existsSync(join(root, name, "bin", "initdb")))
      .sort((a, b) => Number(b) - Number(a));
    if (majors[0] !== undefined) return join(root, majors[0], "bin");
  }
  const initdb = Bun.which("initdb");
  return initdb === null ? null : join(initdb, "..");
}

/** The uid and gid of the `postgres` user, when we are root and must run the server as someone else. */
function postgresUser(): { uid: number; gid: number } | null {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((entry) => entry.startsWith("postgres:"));
  const [, , uid, gid] = line?.split(":") ?? [];
  return uid === undefined || gid === undefined ? null : { uid: Number(uid), gid: Number(gid) };
}

const BIN_DIR = findBinDir();
const AS_ROOT = process.getuid?.() === 0;
const RUN_AS = AS_ROOT ? postgresUser() : null;

/** `describe.skipIf(!hasPostgres)`, with one visible line per file that skips. */
export const hasPostgres = BIN_DIR !== null && (!AS_ROOT || (RUN_AS !== null && Bun.which("runuser") !== null));

export function warnIfNoPostgres(what: string): void {
  if (hasPostgres) return;
  const why =
    BIN_DIR === null
      ? "PostgreSQL's initdb was not found"
      : "running as root, but there is no `postgres` user (or no runuser) to run the server as";
  console.warn(`${why}: skipping ${what} (apt-get install postgresql)`);
}

export interface TestPostgres {
  port: number;
  /** The temp dir holding the cluster, removed on dispose (or at exit). */
  dir: string;
  /** The URL of a database on this server (superuser `postgres`, no password). */
  url(database: string): string;
  /** A new, empty database for one suite; returns its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Fast shutdown, and wait. */
  stop(): Promise<void>;
  /** Starts it again after `stop`, on the same port with the same data (an outage that ends). */
  start(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A binary of the server, run as the `postgres` user when we are root. */
function command(binary: string, args: string[]): string[] {
  if (BIN_DIR === null) throw new Error("PostgreSQL is not installed");
  const path = join(BIN_DIR, binary);
  return RUN_AS === null ? [path, ...args] : ["runuser", "-u", "postgres", "--", path, ...args];
}

async function run(binary: string, args: string[]): Promise<{ code: number; output: string }> {
  const proc = Bun.spawn(command(binary, args), { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, output: `${out}${err}`.trim() };
}

// A test that fails (or a file that throws) before disposing must not leave a server behind: when
// the process ends (exit or signal, see process-end.ts), every cluster still running is stopped at
// once and its files removed. A SIGKILL cannot be caught: its cluster stays until the machine's
// temp dir is cleaned.
const live = new Map<string, Disposable>();
function stopAllNow(): void {
  for (const [data, dir] of live) {
    Bun.spawnSync(command("pg_ctl", ["stop", "-D", data, "-m", "immediate", "-w", "-t", "10"]), {
      stdout: "ignore",
      stderr: "ignore",
    });
    dir[Symbol.dispose]();
  }
  live.clear();
}
let databases = 0;

export async function startPostgres(): Promise<TestPostgres> {
  const dir = tempDir("health-pg-");
  if (RUN_AS !== null) chownSync(dir, RUN_AS.uid, RUN_AS.gid);
  const data = join(dir, "data");
  const log = join(dir, "postgres.log");
  const init = await run("initdb", [
    "-D",
    data,
    "-U",
    "postgres",
    "--auth=trust",
    "--no-sync",
    "--no-instructions",
    "--no-locale",
    "-E",
    "UTF8",
  ]);
  if (init.code !== 0) {
    dir[Symbol.dispose]();
    throw new Error(`initdb failed: ${init.output.split("\n").slice(-3).join(" ")}`);
  }
  atProcessEnd(stopAllNow);
  live.set(data, dir);

  let port = 0;
  let options = "";
  const pgStart = () => run("pg_ctl", ["start", "-w", "-t", "30", "-D", data, "-l", log, "-o", options]);
  // Another process may take the probed port before postgres binds it: try a few.
  for (let attempt = 0; ; attempt++) {
    port = freePort();
    // Loopback only; the socket lives in the temp dir (the default /var/run/postgresql may not
    // exist or belong to us). Durability is not what a test cluster is for.
    options = [
      `-p ${port}`,
      "-c listen_addresses=127.0.0.1",
      `-c unix_socket_directories=${dir}`,
      "-c fsync=off",
      "-c synchronous_commit=off",
      "-c full_page_writes=off",
    ].join(" ");
    const started = await pgStart();
    if (started.code === 0) break;
    const why = existsSync(log) ? readFileSync(log, "utf8").split("\n").slice(-4).join(" ") : started.output;
    if (attempt === 4) {
      live.delete(data);
      dir[Symbol.dispose]();
      throw new Error(`postgres on port ${port} did not start: ${why}`);
    }
  }

  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  let running = true;
  const stop = async () => {
    if (!running) return;
    running = false;
    const stopped = await run("pg_ctl", ["stop", "-D", data, "-m", "fast", "-w", "-t", "30"]);
    if (stopped.code !== 0) throw new Error(`pg_ctl stop failed: ${stopped.output}`);
  };
  return {
    port,
    dir,
    url,
    async createDatabase(name = `health_${process.pid}_${++databases}`) {
      const admin = new SQL({ url: url("postgres"), max: 1 });
      try {
        // Identifiers cannot be parameters; the name is ours, checked to be a plain one.
        if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
        await admin.unsafe(`CREATE DATABASE ${name}`);
      } finally {
        await admin.close();
      }
      return url(name);
    },
    stop,
    async start() {
      if (running) return;
      const started = await pgStart();
      if (started.code !== 0) throw new Error(`postgres did not start again: ${started.output}`);
      running = true;
    },
    async [Symbol.asyncDispose]() {
      await stop();
      live.delete(data);
      dir[Symbol.dispose]();
    },
  };
}
