/**
 * Finds the loops of a folder: every `.ts`/`.js` module directly in it (not `*.test.ts`, `*.d.ts`
 * or `_`-prefixed helpers) must export exactly one class extending `Workflow`. Its loop id is
 * `loop_` + the file stem. A module that breaks this rule is reported, never fatal: one bad file
 * must not keep the other loops, or the server, from starting.
 *
 * Each module is first imported in a short-lived worker, with a time limit, so a module whose
 * top-level code hangs is reported instead of freezing start-up. It is then imported here, in the
 * calling thread, to read its exports (its top-level code runs again then); the loop itself runs
 * in a loop thread, which imports it once per thread.
 */
import { readdir } from "node:fs/promises";
import { extname, join, resolve } from "node:path";
import { loopEnvironment } from "./environment.ts";
import { describeLoadError, formatLocation, type LoadFailure } from "./load-error.ts";
import { resolveLoopSdk } from "./sdk-resolver.ts";
import type { Workflow } from "./index.ts";
import type { ProbeReply } from "./probe.ts";

// Loop modules anywhere import `health/loop` (see sdk-resolver.ts).
resolveLoopSdk();

export type WorkflowClass = new () => Workflow<unknown>;

export interface LoopDefinition {
  /** `loop_` + the file stem. */
  id: string;
  /** The class name, for display. */
  name: string;
  /** Absolute path of the module. */
  file: string;
  /** Which export holds the class (`default` or a named export); the loop thread imports it by this. */
  exportName: string;
  Workflow: WorkflowClass;
  /** `static concurrency` of the class: runs of this loop executing at once, if limited. */
  concurrency?: number;
}

export interface LoopLoadError {
  /** The loop module that was skipped. */
  file: string;
  message: string;
  /** `file:line:column` of the code to fix, when known (it may be a module the loop imports). */
  location?: string;
}

export interface LoadLoopsOptions {
  /** How long a module may take to load in the probe worker. Default 10 s. */
  loadTimeoutMs?: number;
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

export async function loadLoops(dir: string, options: LoadLoopsOptions = {}): Promise<LoadedLoops> {
  const loadTimeoutMs = options.loadTimeoutMs ?? 10_000;
  const loops = new Map<string, LoopDefinition>();
  const errors: LoopLoadError[] = [];
  const root = resolve(dir);
  const fileNames = await listModuleFiles(root);
  for (const fileName of fileNames) {
    const file = join(root, fileName);
    const loaded = await loadLoopModule(file, fileName, loadTimeoutMs);
    if (!loaded.ok) {
      errors.push({ file, message: loaded.error, ...(loaded.location ? { location: loaded.location } : {}) });
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

type Loaded = { ok: true; value: LoopDefinition } | { ok: false; error: string; location?: string };

function loadFailed(failure: LoadFailure): Loaded {
  return {
    ok: false,
    error: `the module failed to load: ${failure.message}`,
    ...(failure.line === undefined ? {} : { location: formatLocation(failure) }),
  };
}

async function loadLoopModule(file: string, fileName: string, loadTimeoutMs: number): Promise<Loaded> {
  const stem = fileName.slice(0, -extname(fileName).length);
  if (!STEM_PATTERN.test(stem)) {
    return {
      ok: false,
      error: `the file name "${stem}" is not a valid loop name: use only letters, digits, "_" and "-"`,
    };
  }
  const probed = await probeModule(file, loadTimeoutMs);
  if (!probed.ok) return loadFailed(probed.failure);
  let module: Record<string, unknown>;
  try {
    module = await import(file);
  } catch (error) {
    return loadFailed(describeLoadError(error, file));
  }
  // `export default class X` also appears under its own name when re-exported; count classes once.
  const found = new Map<WorkflowClass, string>();
  for (const [exportName, value] of Object.entries(module)) {
    if (isWorkflowClass(value) && !found.has(value)) found.set(value, exportName);
  }
  if (found.size === 0) {
    return {
      ok: false,
      error: 'the module exports no class extending Workflow (import { Workflow } from "health/loop")',
    };
  }
  if (found.size > 1) {
    const names = [...found.entries()].map(([cls, exportName]) => `${exportName} (${cls.name})`).join(", ");
    return { ok: false, error: `the module exports ${found.size} Workflow classes, expected exactly one: ${names}` };
  }
  const [only] = found.entries();
  if (only === undefined) return { ok: false, error: "unreachable: no Workflow class" };
  const [LoopClass, exportName] = only;
  const concurrency: unknown = (LoopClass as { concurrency?: unknown }).concurrency;
  if (concurrency !== undefined && (!Number.isSafeInteger(concurrency) || (concurrency as number) < 1)) {
    return {
      ok: false,
      error: `static concurrency of ${LoopClass.name || exportName} must be a whole number ≥ 1, got ${String(concurrency)}`,
    };
  }
  return {
    ok: true,
    value: {
      id: `loop_${stem}`,
      name: LoopClass.name || exportName,
      file,
      exportName,
      Workflow: LoopClass,
      ...(typeof concurrency === "number" ? { concurrency } : {}),
    },
  };
}

const PROBE_URL = new URL("./probe.ts", import.meta.url).href;

function probeModule(file: string, timeoutMs: number): Promise<ProbeReply> {
  return new Promise((resolve) => {
    const worker = new Worker(PROBE_URL, { env: loopEnvironment() });
    function finish(reply: ProbeReply): void {
      clearTimeout(timer);
      worker.terminate();
      resolve(reply);
    }
    const timer = setTimeout(() => {
      finish({
        ok: false,
        failure: {
          file,
          message: `it did not finish loading within ${timeoutMs} ms (top-level code that never ends?)`,
        },
      });
    }, timeoutMs);
    worker.addEventListener("message", (event: MessageEvent<ProbeReply>) => finish(event.data));
    worker.addEventListener("error", (event: ErrorEvent) => {
      event.preventDefault();
      const message = event.message
        .split("\n")
        .find((line) => /error:/i.test(line))
        ?.trim();
      finish({ ok: false, failure: { file, message: message ?? "it threw while loading" } });
    });
    worker.postMessage({ file });
  });
}
