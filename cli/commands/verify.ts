/** `health verify`: a checklist of the workspace, its build, the server and the stored login. */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { jsonArg, serverArg } from "../lib/args.ts";
import { join } from "node:path";
import { defineCommand } from "citty";
import * as v from "valibot";
import { sha256Hex } from "../../core/hash.ts";
import { inspect } from "../code/turn.ts";
import { ExitCode, ExitSignal } from "../errors.ts";
import { fetchAccount, timedFetch, trpcClient, trpcFailure } from "../lib/api.ts";
import { isExpired } from "../lib/auth.ts";
import { buildManifestPath, buildManifestSchema } from "../lib/build.ts";
import { readCredentials } from "../lib/home.ts";
import { colorEnabled, print, printJson, styles } from "../lib/output.ts";
import { credentialsFor, notLoggedIn, resolveServer } from "../lib/server.ts";
import { type Manifest, readManifest } from "../lib/workspace.ts";

interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

const HEALTHZ_TIMEOUT_MS = 3_000;

export default defineCommand({
  meta: {
    name: "verify",
    description: `Check the workspace and print a pass/fail checklist; exit 1 if any check fails.

Checks: health.json is a valid manifest; every loop's source exists; node_modules/health links this
CLI (npx health, and health/loop for the loops); saved routes hold no
unredacted identifiers and no clinical prompt; .health/build is up to date with the sources
(health agent build); the server answers /healthz; stored credentials are valid for it.

Examples:
  health verify
  health verify --json
  HEALTH_URL=https://health.example.com health verify`,
  },
  args: {
    ...serverArg,
    ...jsonArg,
  },
  async run({ args }) {
    const cwd = process.cwd();
    const credentials = readCredentials();
    const { url: server } = resolveServer(args.server, credentials);
    const read = readManifest(cwd);
    const manifest = read.ok ? read.manifest : undefined;
    const checks: Check[] = [
      { name: "manifest", ok: read.ok, detail: read.ok ? describe(read.manifest) : read.problems.join("; ") },
      checkSources(manifest, cwd),
      checkHealthLink(manifest, cwd),
      checkRoutes(manifest),
      checkBuild(manifest, cwd),
    ];
    const reachable = await checkServer(server);
    checks.push(reachable.check);
    checks.push(await checkCredentials(server, reachable.ok, credentials));

    const ok = checks.every((check) => check.ok);
    if (args.json === true) printJson({ ok, server, checks });
    else printChecklist(checks);
    if (!ok) throw new ExitSignal(ExitCode.failure);
  },
});

function describe(manifest: Manifest): string {
  const routes = Object.keys(manifest.routes).length;
  return `"${manifest.name}" on ${manifest.channel}, ${manifest.loops.length} loop(s), ${routes} route(s)`;
}

function needsManifest(name: string): Check {
  return { name, ok: false, detail: "needs a valid health.json" };
}

function checkSources(manifest: Manifest | undefined, cwd: string): Check {
  if (manifest === undefined) return needsManifest("loop sources");
  const missing = manifest.loops.filter((loop) => !existsSync(join(cwd, loop.entry))).map((loop) => loop.entry);
  return missing.length === 0
    ? { name: "loop sources", ok: true, detail: manifest.loops.map((loop) => loop.entry).join(", ") }
    : { name: "loop sources", ok: false, detail: `missing: ${missing.join(", ")}` };
}

/**
 * node_modules/health is this CLI's package (as `health init` links it, or `npm install` from the
 * workspace's package.json): `npx health` here runs it, and loops resolve `health/loop` to its SDK.
 */
function checkHealthLink(manifest: Manifest | undefined, cwd: string): Check {
  const name = "health link";
  if (manifest === undefined) return needsManifest(name);
  const linked = join(cwd, "node_modules", "health");
  const missing = {
    name,
    ok: false,
    detail: "node_modules/health is missing or is not this CLI: run npm install here (package.json links it)",
  };
  let pkg: { name?: unknown; exports?: Record<string, unknown> };
  try {
    pkg = JSON.parse(readFileSync(join(linked, "package.json"), "utf8"));
  } catch {
    return missing;
  }
  if (pkg.name !== "health" || pkg.exports?.["./loop"] === undefined) return missing;
  if (!existsSync(join(cwd, "node_modules", ".bin", "health"))) {
    return { name, ok: false, detail: "node_modules/.bin/health is missing: run npm install here" };
  }
  return { name, ok: true, detail: `npx health and health/loop use ${realpathSync(linked)}` };
}

/** A route edited by hand could carry what `health route` would have redacted or refused. */
function checkRoutes(manifest: Manifest | undefined): Check {
  if (manifest === undefined) return needsManifest("routes");
  const problems: string[] = [];
  for (const [name, route] of Object.entries(manifest.routes)) {
    const { intent, redacted } = inspect(route.prompt);
    if (intent === "clinical_blocked") problems.push(`${name}: asks for clinical advice`);
    else if (redacted !== route.prompt)
      problems.push(`${name}: holds unredacted identifiers (save it again with health route)`);
  }
  const count = Object.keys(manifest.routes).length;
  if (problems.length > 0) return { name: "routes", ok: false, detail: problems.join("; ") };
  return { name: "routes", ok: true, detail: count === 0 ? "none saved yet" : `${count} route(s), redacted` };
}

function checkBuild(manifest: Manifest | undefined, cwd: string): Check {
  const name = "build";
  if (manifest === undefined) return needsManifest(name);
  const path = buildManifestPath(cwd);
  if (!existsSync(path)) return { name, ok: false, detail: "not built yet: run health agent build" };
  let built: v.InferOutput<typeof buildManifestSchema>;
  try {
    built = v.parse(buildManifestSchema, JSON.parse(readFileSync(path, "utf8")));
  } catch {
    return { name, ok: false, detail: `${path} is damaged: run health agent build` };
  }
  const problems: string[] = [];
  for (const loop of manifest.loops) {
    const entry = built.loops.find((b) => b.name === loop.name && b.entry === loop.entry);
    const source = join(cwd, loop.entry);
    if (entry === undefined) problems.push(`${loop.name} was never built`);
    else if (!existsSync(join(cwd, entry.output))) problems.push(`${entry.output} is missing`);
    else if (sha256Hex(readFileSync(join(cwd, entry.output))) !== entry.output_sha256)
      problems.push(`${entry.output} was modified`);
    else if (existsSync(source) && sha256Hex(readFileSync(source)) !== entry.source_sha256)
      problems.push(`${loop.entry} changed since the build`);
  }
  return problems.length === 0
    ? { name, ok: true, detail: `${built.loops.length} loop(s) built ${built.built_at}` }
    : { name, ok: false, detail: `${problems.join("; ")}: run health agent build` };
}

async function checkServer(server: string): Promise<{ ok: boolean; check: Check }> {
  const name = "server";
  try {
    const response = await timedFetch(HEALTHZ_TIMEOUT_MS)(`${server}/healthz`);
    if (!response.ok)
      return { ok: false, check: { name, ok: false, detail: `${server}/healthz answered ${response.status}` } };
    const body: unknown = await response.json().catch(() => ({}));
    const version =
      typeof body === "object" && body !== null && "version" in body ? ` (version ${String(body.version)})` : "";
    return { ok: true, check: { name, ok: true, detail: `${server} is up${version}` } };
  } catch {
    return {
      ok: false,
      check: { name, ok: false, detail: `${server} is not reachable (start it, or pass --server / set HEALTH_URL)` },
    };
  }
}

async function checkCredentials(server: string, reachable: boolean, credentials = readCredentials()): Promise<Check> {
  const name = "credentials";
  const stored = credentialsFor(server, credentials);
  if (stored === undefined || (stored.session === undefined && stored.token === undefined)) {
    return { name, ok: false, detail: `${notLoggedIn(server, credentials)}: run health login` };
  }
  const held: string[] = [];
  const problems: string[] = [];
  if (stored.session !== undefined) {
    if (isExpired(stored.session)) problems.push("the admin session expired: run health login");
    else if (reachable) {
      try {
        await trpcClient(server, stored.session.secret).auth.me.query();
        held.push(`admin session of ${stored.session.email}`);
      } catch (error) {
        problems.push(
          trpcFailure(error)?.code === "UNAUTHORIZED"
            ? "the admin session expired: run health login"
            : "the admin session could not be checked",
        );
      }
    } else held.push(`admin session of ${stored.session.email} (not checked: server unreachable)`);
  }
  if (stored.token !== undefined) {
    if (reachable) {
      try {
        const account = await fetchAccount(server, stored.token.secret);
        held.push(`token "${account.token_name}" (${account.scopes.join(", ") || "no scopes"})`);
      } catch (error) {
        problems.push(error instanceof Error ? error.message : "the token could not be checked");
      }
    } else held.push(`token "${stored.token.name ?? "token"}" (not checked: server unreachable)`);
  }
  return problems.length === 0
    ? { name, ok: true, detail: held.join("; ") }
    : { name, ok: false, detail: problems.join("; ") };
}

function printChecklist(checks: readonly Check[]): void {
  const s = styles(colorEnabled(process.stdout));
  for (const check of checks) {
    const mark = check.ok ? s.green("✔ pass") : s.red("✖ fail");
    print(`${mark}  ${s.bold(check.name.padEnd(12))} ${check.detail}`);
  }
  const failed = checks.filter((check) => !check.ok).length;
  print();
  print(failed === 0 ? s.green("All checks passed.") : s.red(`${failed} of ${checks.length} checks failed.`));
}
