/**
 * A builder's workspace: a directory with a `health.json` manifest, its loops under `loops/`,
 * and the CLI's local state under `.health/`. The manifest is validated with valibot wherever
 * it is read.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { channels } from "../../core/commands.ts";
import { CliError } from "../errors.ts";

export const MANIFEST_FILE = "health.json";

/**
 * Names of workspaces, loops and routes. The gate's slug without dots: a loop's name is its file
 * stem, and a loop id (`loop_<stem>`) may not contain a dot.
 */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
export const NAME_RULE = "letters, digits, '_' or '-', starting with a letter or digit, at most 64";

const name = (field: string) => v.pipe(v.string(), v.regex(NAME_PATTERN, `${field} must be ${NAME_RULE}`));

const loopSchema = v.object({
  name: name("loops[].name"),
  /** Relative to the workspace, inside it. */
  entry: v.pipe(
    v.string(),
    v.regex(/^(?!\/)(?!.*(?:^|\/)\.\.(?:\/|$))[\w./-]+\.ts$/, "loops[].entry must be a .ts path inside the workspace"),
  ),
});

export const routeSchema = v.object({
  task: v.pipe(v.string(), v.nonEmpty("routes[].task must not be empty")),
  /** Redacted before it was saved. */
  prompt: v.pipe(v.string(), v.nonEmpty("routes[].prompt must not be empty")),
  model: v.pipe(v.string(), v.nonEmpty()),
  saved_at: v.string(),
});

export const manifestSchema = v.object({
  name: name("name"),
  channel: v.picklist(channels, `channel must be one of ${channels.join(", ")}`),
  loops: v.pipe(v.array(loopSchema), v.minLength(1, "loops must list at least one loop")),
  routes: v.record(name("a route name"), routeSchema),
});

export type Manifest = v.InferOutput<typeof manifestSchema>;
export type Route = v.InferOutput<typeof routeSchema>;

export const manifestPath = (dir = process.cwd()): string => join(dir, MANIFEST_FILE);

export type ManifestRead = { ok: true; manifest: Manifest } | { ok: false; missing: boolean; problems: string[] };

/** Reads and validates `health.json`; problems are listed one per issue, with their path. */
export function readManifest(dir = process.cwd()): ManifestRead {
  const path = manifestPath(dir);
  if (!existsSync(path)) return { ok: false, missing: true, problems: [`no ${MANIFEST_FILE} in ${dir}`] };
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    return { ok: false, missing: false, problems: [`${MANIFEST_FILE} is not valid JSON: ${(error as Error).message}`] };
  }
  const parsed = v.safeParse(manifestSchema, raw);
  if (parsed.success) return { ok: true, manifest: parsed.output };
  return {
    ok: false,
    missing: false,
    problems: parsed.issues.map((issue) => {
      const where = issue.path?.map((p) => String(p.key)).join(".");
      return where ? `${where}: ${issue.message}` : issue.message;
    }),
  };
}

/** The manifest, or an error that says how to get one. */
export function requireManifest(dir = process.cwd()): Manifest {
  const read = readManifest(dir);
  if (read.ok) return read.manifest;
  if (read.missing) {
    throw new CliError(`No ${MANIFEST_FILE} in ${dir}`, {
      hint: "Run health init <name> --channel <channel> first, or cd into a workspace",
    });
  }
  throw new CliError(`${manifestPath(dir)} is invalid: ${read.problems.join("; ")}`);
}

export function writeManifest(manifest: Manifest, dir = process.cwd()): void {
  const path = manifestPath(dir);
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(manifest, null, 2)}\n`);
  renameSync(temp, path);
}

/**
 * `health.json` as planning context: any JSON object, or null (absent, unreadable or not an
 * object). Planning does not require a valid workspace, so this never throws.
 */
export function manifestForPlanning(dir = process.cwd()): {
  manifest: Record<string, unknown> | null;
  warning?: string;
} {
  const path = manifestPath(dir);
  if (!existsSync(path)) return { manifest: null };
  try {
    const raw: unknown = JSON.parse(readFileSync(path, "utf8"));
    if (typeof raw === "object" && raw !== null && !Array.isArray(raw))
      return { manifest: raw as Record<string, unknown> };
    return { manifest: null, warning: `${MANIFEST_FILE} is not a JSON object; planning without it` };
  } catch {
    return { manifest: null, warning: `${MANIFEST_FILE} is not valid JSON; planning without it` };
  }
}
