/** `health init <name> --channel <channel>`: scaffold a workspace with one loop. */
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { defineCommand } from "citty";
import { channels } from "../../core/commands.ts";
import { CliError, UsageError } from "../errors.ts";
import { log } from "../lib/log.ts";
import { printJson } from "../lib/output.ts";
import { LOOP_SDK, PACKAGE_ROOT } from "../lib/paths.ts";
import { loopTemplate, packageJsonTemplate, tsconfigTemplate } from "../lib/templates.ts";
import { MANIFEST_FILE, type Manifest, NAME_PATTERN, NAME_RULE, writeManifest } from "../lib/workspace.ts";

export default defineCommand({
  meta: {
    name: "init",
    description: `Scaffold a workspace: health.json, one loop for the channel, tsconfig.json and package.json.

Where: in ./<name>/, or in the current directory itself when it is empty apart from hidden entries
(such as the .health/ that health code leaves, or .git/). That way a plan run step by step with
health code --exec in a fresh directory keeps working in the workspace it just created.

What: health.json ({ name, channel, loops: [{ name, entry }], routes: {} }); loops/<name>.ts, a class
extending Workflow from health/loop that validates, routes and acknowledges with step.do; a
tsconfig.json whose "paths" map health/loop to this CLI's SDK; a package.json that depends on health
(file: this CLI), already linked into node_modules/ as npm install would, so that npx health in the
workspace runs this CLI and health/loop resolves with no install step (health verify checks both).

Examples:
  health init intake --channel sms
  health init billing-desk --channel email`,
  },
  args: {
    name: { type: "positional", description: "Workspace and loop name", required: true },
    channel: {
      type: "enum",
      options: [...channels],
      description: "Where the loop's messages come from",
      required: true,
    },
    json: { type: "boolean", description: "Print what was created as JSON" },
  },
  run({ args }) {
    if (!NAME_PATTERN.test(args.name)) throw new UsageError(`The name must be ${NAME_RULE}; got "${args.name}"`);
    const channel = channels.find((c) => c === args.channel);
    if (channel === undefined) throw new UsageError(`--channel must be one of ${channels.join(", ")}`);
    const cwd = process.cwd();
    const inPlace = isEffectivelyEmpty(cwd);
    const dir = inPlace ? cwd : join(cwd, args.name);
    if (!inPlace && existsSync(dir) && !isEffectivelyEmpty(dir)) {
      throw new CliError(`./${args.name} already exists and is not empty`, {
        hint: "Pick another name, or run health init in an empty directory",
      });
    }
    if (existsSync(join(dir, MANIFEST_FILE)))
      throw new CliError(`${join(dir, MANIFEST_FILE)} already exists: this is already a workspace`);

    const entry = `loops/${args.name}.ts`;
    const manifest: Manifest = { name: args.name, channel, loops: [{ name: args.name, entry }], routes: {} };
    mkdirSync(join(dir, "loops"), { recursive: true });
    writeManifest(manifest, dir);
    writeFileSync(join(dir, entry), loopTemplate(args.name, channel));
    writeFileSync(join(dir, "tsconfig.json"), tsconfigTemplate(LOOP_SDK));
    writeFileSync(join(dir, "package.json"), packageJsonTemplate(args.name, PACKAGE_ROOT));
    if (!existsSync(join(dir, ".gitignore"))) writeFileSync(join(dir, ".gitignore"), ".health/\nnode_modules/\n");
    linkHealth(dir);

    const files = [MANIFEST_FILE, entry, "tsconfig.json", "package.json"];
    if (args.json === true) {
      printJson({ dir, in_place: inPlace, manifest, files });
      return;
    }
    const where = inPlace
      ? "the current directory (it was empty apart from hidden entries)"
      : `./${relative(cwd, dir)}/`;
    log.success(`Created the ${channel} workspace "${args.name}" in ${where}`);
    for (const file of files) process.stdout.write(`  ${file}\n`);
    const next = inPlace ? "" : `cd ${args.name} && `;
    log.info(
      `Next: ${next}npx health route --task <task> --prompt "<text>" --save --name <name>, then npx health agent build`,
    );
  },
});

/**
 * What `npm install` would make of the package.json's `health: file:…` dependency, made at once:
 * node_modules/health → this CLI's package, and node_modules/.bin/health → its launcher. Then
 * `npx health` inside the workspace runs this CLI (never a registry package of the same name), and
 * `import … from "health/loop"` resolves for Bun, editors and tsc without an install step.
 */
function linkHealth(dir: string): void {
  const bin = join(dir, "node_modules", ".bin");
  mkdirSync(bin, { recursive: true });
  symlinkSync(PACKAGE_ROOT, join(dir, "node_modules", "health"), "dir");
  symlinkSync(join("..", "health", "cli", "health.mjs"), join(bin, "health"));
}

/** Empty, or holding only hidden entries (.health/, .git/, .gitignore…). */
function isEffectivelyEmpty(dir: string): boolean {
  return readdirSync(dir).every((entry) => entry.startsWith("."));
}
