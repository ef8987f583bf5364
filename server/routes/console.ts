/**
 * adminConsole: the single-page admin console of admin/, bundled by Bun's bundler when the app
 * is composed and served from memory under /admin. `npm run server` therefore needs no build
 * step, and nothing of the console is written to disk.
 *
 * Every response carries a strict Content-Security-Policy: scripts, styles, images and fetches
 * from this origin only, no inline script or style, Trusted Types enforced (the console never
 * writes HTML as a string), and no framing. Deep links such as /admin/runs/run_x serve the same
 * index, and the console routes on the client.
 */
import { join } from "node:path";
import { Elysia } from "elysia";
import { instanceSeed } from "../../http/context.ts";
import { HttpProblem } from "../../http/problem.ts";

export interface AdminConsoleOptions {
  /** The console's HTML entry point. Default: admin/index.html of this repository. */
  entry?: string;
  /** Minify the bundle. Default: true. */
  minify?: boolean;
  /** Where a failed build is reported. Default: console.error. */
  log?: (message: string) => void;
}

/** Where the bundler puts every file the index refers to; the index itself is served at /admin. */
export const ADMIN_ASSETS_PATH = "/admin/assets/";

export const ADMIN_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  // The console submits its forms with fetch; a real form submission would be a bug.
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join("; ");

export const ADMIN_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": ADMIN_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

interface BundledFile {
  body: ArrayBuffer;
  type: string;
}

interface ConsoleBundle {
  index: BundledFile;
  /** By file name under ADMIN_ASSETS_PATH; names carry a content hash. */
  assets: Map<string, BundledFile>;
}

type BuildOutcome = { ok: true; bundle: ConsoleBundle } | { ok: false; message: string };

const DEFAULT_ENTRY = join(import.meta.dir, "..", "..", "admin", "index.html");

/** The bundle depends only on the sources, so one build serves every app of the process. */
const builds = new Map<string, Promise<BuildOutcome>>();

function describeBuildError(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return error.errors.map((inner) => (inner instanceof Error ? inner.message : String(inner))).join("\n");
  }
  return error instanceof Error ? error.message : String(error);
}

async function bundleConsole(entry: string, minify: boolean): Promise<BuildOutcome> {
  try {
    const result = await Bun.build({
      entrypoints: [entry],
      target: "browser",
      minify,
      publicPath: ADMIN_ASSETS_PATH,
      naming: { entry: "[name]-[hash].[ext]", chunk: "[name]-[hash].[ext]", asset: "[name]-[hash].[ext]" },
      define: { "process.env.NODE_ENV": JSON.stringify("production") },
    });
    let index: BundledFile | undefined;
    const assets = new Map<string, BundledFile>();
    for (const output of result.outputs) {
      const file = { body: await output.arrayBuffer(), type: output.type };
      const name = output.path.replace(/^.*\//, "");
      if (output.kind === "entry-point" && name.endsWith(".html")) index = file;
      else assets.set(name, file);
    }
    if (index === undefined) return { ok: false, message: "the bundle has no HTML entry point" };
    return { ok: true, bundle: { index, assets } };
  } catch (error) {
    return { ok: false, message: describeBuildError(error) };
  }
}

function buildConsole(entry: string, minify: boolean, log: (message: string) => void): Promise<BuildOutcome> {
  const key = `${entry}\0${minify}`;
  const existing = builds.get(key);
  if (existing !== undefined) return existing;
  const build = bundleConsole(entry, minify).then(function reportFailure(outcome) {
    if (!outcome.ok) log(`[admin] the console failed to build; /admin answers 500:\n${outcome.message}`);
    return outcome;
  });
  builds.set(key, build);
  return build;
}

function fileResponse(file: BundledFile, cacheControl: string): Response {
  return new Response(file.body, {
    headers: { ...ADMIN_SECURITY_HEADERS, "content-type": file.type, "cache-control": cacheControl },
  });
}

export const adminConsole = (options: AdminConsoleOptions = {}) => {
  const log = options.log ?? ((message: string) => console.error(message));
  // Started now, awaited by the first request: start-up does not wait for the bundler.
  const build = buildConsole(options.entry ?? DEFAULT_ENTRY, options.minify ?? true, log);

  async function bundleOrFail(headers: Record<string, unknown>): Promise<ConsoleBundle> {
    // The error renderer copies these, so problems under /admin carry the same policy.
    Object.assign(headers, ADMIN_SECURITY_HEADERS);
    const outcome = await build;
    if (!outcome.ok) throw new HttpProblem("internal", "The admin console failed to build; see the server log");
    return outcome.bundle;
  }

  return new Elysia({ name: "health.admin-console", seed: instanceSeed() })
    .get("/admin", async function serveConsoleIndex({ set }) {
      const bundle = await bundleOrFail(set.headers);
      // Not cached: a new deployment must reach the browser with its new asset names.
      return fileResponse(bundle.index, "no-cache");
    })
    .get("/admin/assets/:file", async function serveConsoleAsset({ params, set }) {
      const bundle = await bundleOrFail(set.headers);
      const asset = bundle.assets.get(params.file);
      if (asset === undefined) throw new HttpProblem("not_found", "No such console asset");
      // Names carry a content hash, so a cached copy is never stale.
      return fileResponse(asset, "public, max-age=31536000, immutable");
    })
    .get("/admin/*", async function serveConsoleDeepLink({ path, set }) {
      const bundle = await bundleOrFail(set.headers);
      if (path.startsWith(ADMIN_ASSETS_PATH)) throw new HttpProblem("not_found", "No such console asset");
      return fileResponse(bundle.index, "no-cache");
    });
};
