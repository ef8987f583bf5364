/**
 * Loop modules import the SDK as `health/loop`, the package name of this repository. Inside the
 * repository (or a workspace made by `health init`) that name resolves through `node_modules` or
 * `tsconfig` paths; a loops folder anywhere else (`HEALTH_LOOPS_DIR=/srv/loops`) has neither.
 *
 * A Bun runtime plugin points the name at this server's SDK, in the server's thread and in every
 * loop worker. It rewrites the import specifier when a source file outside this repository is
 * loaded, because Bun 1.4 does not call runtime `onResolve` hooks for static imports inside a
 * dynamically imported module, while `onLoad` hooks do run there.
 */
import { plugin } from "bun";
import { dirname, extname } from "node:path";

const SDK = new URL("./index.ts", import.meta.url).pathname;
const ROOT = dirname(dirname(dirname(SDK)));
const SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])health\/loop\2/g;
const LOADERS = { ".ts": "ts", ".mts": "ts", ".tsx": "tsx", ".js": "js", ".mjs": "js" } as const;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Rewrites `health/loop` import specifiers in `source` to the absolute SDK path. */
export function pointAtSdk(source: string): string {
  return source.replace(SPECIFIER, (_match, before: string) => `${before}${JSON.stringify(SDK)}`);
}

let registered = false;

export function resolveLoopSdk(): void {
  if (registered) return;
  registered = true;
  // Source files outside this repository and outside any node_modules folder.
  const outside = new RegExp(`^(?!${escapeRegExp(ROOT)}/)(?!.*/node_modules/).*\\.(?:ts|mts|tsx|js|mjs)$`);
  plugin({
    name: "health-loop-sdk",
    setup(builder) {
      builder.onLoad({ filter: outside }, async ({ path }) => {
        const loader = LOADERS[extname(path) as keyof typeof LOADERS] ?? "ts";
        return { contents: pointAtSdk(await Bun.file(path).text()), loader };
      });
    },
  });
}
