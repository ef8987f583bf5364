/** A fresh directory under the OS temp dir, removed with everything in it on dispose (`using`). */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export function tempDir(prefix = "health-test-"): string & Disposable {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return Object.assign(dir, {
    [Symbol.dispose]() {
      rmSync(dir, { recursive: true, force: true });
    },
  }) as string & Disposable;
}
