/**
 * `health agent build`: type-check the workspace with TypeScript when it can be found, then bundle
 * each loop of the manifest (with the SDK inside it) into `.health/build/`. A build manifest
 * records each loop's source hash, so `health verify` can tell a stale build from a fresh one.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import * as v from "valibot";
import { sha256Hex } from "../../core/hash.ts";
import { PACKAGE_ROOT } from "./paths.ts";
import type { Manifest } from "./workspace.ts";

export interface Problem {
  file: string;
  line: number;
  column: number;
  message: string;
}

export const formatProblem = (p: Problem): string => `${p.file}:${p.line}:${p.column}: ${p.message}`;

export interface TypecheckResult {
  ran: boolean;
  ok: boolean;
  /** The tsc used, when one was found. */
  tsc: string | null;
  skipped_reason: string | null;
  errors: Problem[];
}

export const buildDir = (cwd = process.cwd()): string => join(cwd, ".health", "build");
export const buildManifestPath = (cwd?: string): string => join(buildDir(cwd), "manifest.json");

const builtLoopSchema = v.object({
  name: v.string(),
  entry: v.string(),
  output: v.string(),
  bytes: v.number(),
  source_sha256: v.string(),
  output_sha256: v.string(),
});
export const buildManifestSchema = v.object({ built_at: v.string(), loops: v.array(builtLoopSchema) });
export type BuiltLoop = v.InferOutput<typeof builtLoopSchema>;
export type BuildManifest = v.InferOutput<typeof buildManifestSchema>;

/** The workspace's own TypeScript (or one above it), else the one this CLI was installed with. */
export function findTsc(cwd: string): string | null {
  for (let dir = cwd; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", "typescript", "bin", "tsc");
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) break;
  }
  const own = join(PACKAGE_ROOT, "node_modules", "typescript", "bin", "tsc");
  return existsSync(own) ? own : null;
}

const TSC_LINE = /^(.+?)\((\d+),(\d+)\): error (TS\d+): (.*)$/;

/** tsc's `--pretty false` lines; a line that does not start a diagnostic continues the last one. */
export function parseTscOutput(text: string): Problem[] {
  const problems: Problem[] = [];
  for (const line of text.split("\n")) {
    const match = TSC_LINE.exec(line);
    if (match !== null) {
      problems.push({
        file: match[1] ?? "",
        line: Number(match[2]),
        column: Number(match[3]),
        message: `${match[5] ?? ""} (${match[4] ?? ""})`,
      });
    } else if (line.trim() !== "" && problems.length > 0) {
      const last = problems[problems.length - 1];
      if (last !== undefined) last.message += ` ${line.trim()}`;
    }
  }
  return problems;
}

const TYPECHECK_TIMEOUT_MS = 120_000;

export async function typecheck(cwd: string): Promise<TypecheckResult> {
  const tsc = findTsc(cwd);
  if (tsc === null)
    return {
      ran: false,
      ok: true,
      tsc: null,
      skipped_reason: "TypeScript is not installed here (npm install -D typescript)",
      errors: [],
    };
  if (!existsSync(join(cwd, "tsconfig.json"))) {
    return { ran: false, ok: true, tsc, skipped_reason: "the workspace has no tsconfig.json", errors: [] };
  }
  // tsc's launcher is a JS file; run it with this runtime so Node need not be installed.
  const child = Bun.spawn([process.execPath, tsc, "--noEmit", "-p", "tsconfig.json", "--pretty", "false"], {
    cwd,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    timeout: TYPECHECK_TIMEOUT_MS,
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  if (code === 0) return { ran: true, ok: true, tsc, skipped_reason: null, errors: [] };
  const errors = parseTscOutput(`${stdout}\n${stderr}`);
  if (errors.length === 0) {
    const first = `${stdout}\n${stderr}`.trim().split("\n")[0] ?? `tsc exited with ${code}`;
    errors.push({ file: "tsconfig.json", line: 1, column: 1, message: first });
  }
  return { ran: true, ok: false, tsc, skipped_reason: null, errors };
}

export interface BundleResult {
  built: BuiltLoop[];
  errors: Problem[];
}

/** One Bun.build per loop, so each output is named after its loop whatever its entry path. */
export async function bundle(manifest: Manifest, cwd: string): Promise<BundleResult> {
  const outdir = buildDir(cwd);
  mkdirSync(outdir, { recursive: true });
  const built: BuiltLoop[] = [];
  const errors: Problem[] = [];
  for (const loop of manifest.loops) {
    const entry = join(cwd, loop.entry);
    if (!existsSync(entry)) {
      errors.push({ file: loop.entry, line: 1, column: 1, message: `the entry of loop "${loop.name}" does not exist` });
      continue;
    }
    const result = await Bun.build({
      entrypoints: [entry],
      outdir,
      target: "bun",
      format: "esm",
      naming: { entry: `${loop.name}.[ext]` },
      throw: false,
    });
    for (const message of result.logs) {
      if (message.level !== "error") continue;
      const position = "position" in message ? message.position : null;
      errors.push({
        file: position !== null ? relative(cwd, position.file) || loop.entry : loop.entry,
        line: position?.line ?? 1,
        column: position !== null ? position.column + 1 : 1,
        message: message.message,
      });
    }
    const output = result.outputs.find((o) => o.kind === "entry-point");
    if (!result.success || output === undefined) {
      if (errors.length === 0)
        errors.push({ file: loop.entry, line: 1, column: 1, message: "the bundler produced no output" });
      continue;
    }
    const bytes = readFileSync(output.path);
    built.push({
      name: loop.name,
      entry: loop.entry,
      output: relative(cwd, output.path),
      bytes: bytes.byteLength,
      source_sha256: sha256Hex(readFileSync(entry)),
      output_sha256: sha256Hex(bytes),
    });
  }
  return { built, errors };
}

export function writeBuildManifest(loops: BuiltLoop[], cwd: string): void {
  const manifest: BuildManifest = { built_at: new Date().toISOString(), loops };
  writeFileSync(buildManifestPath(cwd), `${JSON.stringify(manifest, null, 2)}\n`);
}

/** A failed build leaves no build manifest behind, so verify cannot mistake an old one for it. */
export function clearBuildManifest(cwd: string): void {
  rmSync(buildManifestPath(cwd), { force: true });
}
