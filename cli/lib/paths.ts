/** Where this CLI's own package lives: workspaces it scaffolds resolve `health/loop` from here. */
import { join } from "node:path";

export const PACKAGE_ROOT = join(import.meta.dir, "..", "..");

/** The loop SDK that package.json exports as `health/loop`. */
export const LOOP_SDK = join(PACKAGE_ROOT, "core", "loop", "index.ts");
