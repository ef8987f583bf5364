#!/usr/bin/env node
/**
 * The `health` command as npm installs it (package.json "bin"): a small Node launcher that runs
 * the CLI (cli/bin.ts) with the Bun this package brought as a dependency, so `health` works from
 * any shell that has Node, after `npm link` in a clone or in a workspace made by `health init`.
 * Terminal, signals and exit code pass straight through.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const entry = join(here, "bin.ts");

/** This package's Bun, then HEALTH_BUN, then `bun` on the PATH. */
function findBun() {
  if (process.env.HEALTH_BUN) return process.env.HEALTH_BUN;
  try {
    const binary = join(dirname(createRequire(import.meta.url).resolve("bun/package.json")), "bin", "bun.exe");
    if (existsSync(binary)) return binary;
  } catch {
    // Not installed next to this package: fall through to the PATH.
  }
  return "bun";
}

const child = spawn(findBun(), [entry, ...process.argv.slice(2)], { stdio: "inherit" });
// The terminal sends Ctrl+C to the whole process group: the CLI handles it; this launcher only waits.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    if (signal !== "SIGINT") child.kill(signal);
  });
}
child.on("error", (error) => {
  process.stderr.write(
    `health: could not start Bun (${error.message}). Run npm install in the health clone, or set HEALTH_BUN to a bun binary.\n`,
  );
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal !== null) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
