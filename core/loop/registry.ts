/**
 * Finds the loops of a folder: every `.ts`/`.js` module directly in it (not `*.test.ts`, `*.d.ts`
 * or `_`-prefixed helpers) must export exactly one class extending `Workflow`. Its loop id is
 * `loop_` + the file stem. A module that breaks this rule is reported, never fatal: one bad file
 * must not keep the other loops, or the server, from starting.
 *
 * Modules are imported here, in the calling thread, to read their exports; their top-level code
 * runs then. The loop itself later runs in a worker that imports the module again.
 */
import { readdir } from "node:fs/promises";
import { extname, join, resolve } from "node:path";
import type { Workflow } from "./index.ts";

export type WorkflowClass = new () => Workflow<unknown>;

export interface LoopDefinition {
  /** `loop_` + the file stem. */
  id: string;
  /** The class name, for display. */
  name: string;
  /** Absolute path of the module. */
  file: string;
  /** Which export holds the class (`default` or a named export); the worker imports it by this. */
  exportName: string;
  Workflow: WorkflowClass;
}

export interface LoopLoadError {
  file: string;
  message: string;
}

export interface LoadedLoops {
  loops: Map<string, LoopDefinition>;
  errors: LoopLoadError[];
}

const STEM_PATTERN = /^[A-Za-z0-9_-]+$/;
const WORKFLOW_BRAND = Symbol.for("health.loop.workflow");

/** True for a class extending `Workflow` from any copy of the SDK (bundled loops carry their own). */
export function isWorkflowClass(value: unknown): value is WorkflowClass {
  // The base class holds the brand as its own property; loops inherit it. A module that re-exports
  // the SDK's Workflow must not count it as a loop.
  return typeof value === "function" && WORKFLOW_BRAND in value && !Object.hasOwn(value, WORKFLOW_BRAND);
}

export function isLoopModuleFile(fileName: string): boolean {
  if (fileName.startsWith("_") || fileName.startsWith(".")) return false;
  if (fileName.endsWith(".d.ts") || /\.test\.[tj]s$/.test(fileName)) return false;
  const extension = extname(fileName);
  return extension === ".ts" || extension === ".js";
}

export async function loadLoops(dir: string): Promise<LoadedLoops> {
  const loops = new Map<string, LoopDefinition>();
  const errors: LoopLoadError[] = [];
  const root = resolve(dir);
  const fileNames = await listModuleFiles(root);
  for (const fileName of fileNames) {
    const file = join(root, fileName);
    const loaded = await loadLoopModule(file, fileName);
    if (!loaded.ok) {
      errors.push({ file, message: loaded.error });
      continue;
    }
    const clash = loops.get(loaded.value.id);
    if (clash !== undefined) {
      errors.push({ file, message: `loop id ${loaded.value.id} is already taken by ${clash.file}` });
      continue;
    }
    loops.set(loaded.value.id, loaded.value);
  }
  return { loops, errors };
}

async function listModuleFiles(root: string): Promise<string[]> {
  try {
    const entries = await readdir(root, { withFileTypes: true });
    return entries
      .filter((entry) => entry.isFile() && isLoopModuleFile(entry.name))
      .map((entry) => entry.name)
      .sort();
  } catch (error) {
    // A missing folder means "no loops", the default for an installation that has none yet.
    if (error instanceof Error && "code" in error && (error.code === "ENOENT" || error.code === "ENOTDIR")) return [];
    throw error;
  }
}

type Loaded = { ok: true; value: LoopDefinition } | { ok: false; error: string };

async function loadLoopModule(file: string, fileName: string): Promise<Loaded> {
  const stem = fileName.slice(0, -extname(fileName).length);
  if (!STEM_PATTERN.test(stem)) {
    return { ok: false, error: `the file name "${stem}" is not a valid loop name: use only letters, digits, "_" and "-"` };
  }
  let module: Record<string, unknown>;
  try {
    module = await import(file);
  } catch (error) {
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return { ok: false, error: `the module failed to load: ${reason}` };
  }
  // `export default class X` also appears under its own name when re-exported; count classes once.
  const found = new Map<WorkflowClass, string>();
  for (const [exportName, value] of Object.entries(module)) {
    if (isWorkflowClass(value) && !found.has(value)) found.set(value, exportName);
  }
  if (found.size === 0) {
    return { ok: false, error: 'the module exports no class extending Workflow (import { Workflow } from "health/loop")' };
  }
  if (found.size > 1) {
    const names = [...found.entries()].map(([cls, exportName]) => `${exportName} (${cls.name})`).join(", ");
    return { ok: false, error: `the module exports ${found.size} Workflow classes, expected exactly one: ${names}` };
  }
  const [only] = found.entries();
  if (only === undefined) return { ok: false, error: "unreachable: no Workflow class" };
  const [LoopClass, exportName] = only;
  return {
    ok: true,
    value: { id: `loop_${stem}`, name: LoopClass.name || exportName, file, exportName, Workflow: LoopClass },
  };
}
