/** `health agent build`: type-check and bundle every loop of the workspace into .health/build/. */
import { defineCommand } from "citty";
import { ExitCode, ExitSignal } from "../../errors.ts";
import { bundle, clearBuildManifest, formatProblem, typecheck, writeBuildManifest } from "../../lib/build.ts";
import { log } from "../../lib/log.ts";
import { printJson } from "../../lib/output.ts";
import { requireManifest } from "../../lib/workspace.ts";

export default defineCommand({
  meta: {
    name: "build",
    description: `Type-check the workspace and bundle each loop of health.json into .health/build/<loop>.js.

The type-check uses the workspace's TypeScript, else the one installed with this CLI; when neither
is found it is skipped with a warning. Each loop is bundled with Bun.build, the health/loop SDK
inside it. Errors are reported as file:line:column; any error exits 1. .health/build/manifest.json
records what was built from which source, for health verify.

Examples:
  health agent build
  health agent build --json`,
  },
  args: {
    json: { type: "boolean", description: "Print a JSON report" },
  },
  async run({ args }) {
    const cwd = process.cwd();
    const manifest = requireManifest(cwd);
    const checked = await typecheck(cwd);
    const bundled = await bundle(manifest, cwd);
    const ok = checked.ok && bundled.errors.length === 0;
    if (ok) writeBuildManifest(bundled.built, cwd);
    else clearBuildManifest(cwd);

    if (args.json === true) {
      printJson({ ok, typecheck: checked, outputs: bundled.built, errors: bundled.errors });
    } else {
      if (!checked.ran) log.warn(`Type-check skipped: ${checked.skipped_reason ?? "no TypeScript"}`);
      else if (checked.ok) log.success("Type-check passed");
      for (const problem of checked.errors) log.error(formatProblem(problem));
      for (const problem of bundled.errors) log.error(formatProblem(problem));
      for (const loop of bundled.built)
        log.success(`Bundled ${loop.entry} → ${loop.output} (${(loop.bytes / 1024).toFixed(1)} KiB)`);
      if (!ok) log.error(`Build failed: ${checked.errors.length + bundled.errors.length} error(s)`);
    }
    if (!ok) throw new ExitSignal(ExitCode.failure);
  },
});
