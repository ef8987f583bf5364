import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Workflow } from "health/loop";
import { describeLoadError, formatLocation } from "../core/loop/load-error.ts";
import { isLoopModuleFile, loadLoops } from "../core/loop/registry.ts";
import { tempDir } from "./support/temp-dir.ts";

const REGISTRY_FIXTURES = join(import.meta.dir, "fixtures", "registry");

describe("loadLoops", () => {
  test("registers one loop per valid module and reports every bad one", async () => {
    const { loops, errors } = await loadLoops(REGISTRY_FIXTURES, { loadTimeoutMs: 1_000 });
    const registered = [...loops.values()].map(({ id, name, file, exportName, Workflow: LoopClass }) => ({
      id,
      name,
      file,
      exportName,
      isWorkflow: LoopClass.prototype instanceof Workflow,
    }));
    expect(registered).toEqual([
      {
        id: "loop_good",
        name: "GoodLoop",
        file: join(REGISTRY_FIXTURES, "good.ts"),
        exportName: "default",
        isWorkflow: true,
      },
      {
        id: "loop_named-export",
        name: "NamedLoop",
        file: join(REGISTRY_FIXTURES, "named-export.ts"),
        exportName: "NamedLoop",
        isWorkflow: true,
      },
    ]);
    expect(errors).toEqual([
      {
        file: join(REGISTRY_FIXTURES, "bad name.ts"),
        message: 'the file name "bad name" is not a valid loop name: use only letters, digits, "_" and "-"',
      },
      {
        file: join(REGISTRY_FIXTURES, "broken.ts"),
        message: "the module failed to load: this module fails while loading",
        location: `${join(REGISTRY_FIXTURES, "broken.ts")}:3:11`,
      },
      {
        file: join(REGISTRY_FIXTURES, "none.ts"),
        message: 'the module exports no class extending Workflow (import { Workflow } from "health/loop")',
      },
      {
        file: join(REGISTRY_FIXTURES, "stuck.ts"),
        message:
          "the module failed to load: it did not finish loading within 1000 ms (top-level code that never ends?)",
      },
      {
        file: join(REGISTRY_FIXTURES, "two.ts"),
        message: "the module exports 2 Workflow classes, expected exactly one: First (First), Second (Second)",
      },
    ]);
  });

  test("a missing directory means no loops", async () => {
    expect(await loadLoops("/nonexistent/health/loops")).toEqual({ loops: new Map(), errors: [] });
  });

  test("skips tests, declarations, helpers and other files; .js modules count", async () => {
    using dir = tempDir("health-loop-");
    const sdk = join(import.meta.dir, "..", "core", "loop", "index.ts");
    const loop = `import { Workflow } from ${JSON.stringify(sdk)};\nexport class L extends Workflow { async run() { return 1; } }\n`;
    writeFileSync(join(dir, "plain.js"), loop);
    writeFileSync(join(dir, "plain.test.ts"), "throw new Error('must not be imported');\n");
    writeFileSync(join(dir, "_shared.ts"), "throw new Error('must not be imported');\n");
    writeFileSync(join(dir, "notes.md"), "# not a module\n");
    writeFileSync(join(dir, "types.d.ts"), "export type T = 1;\n");
    writeFileSync(join(dir, "plain.ts"), loop);
    const { loops, errors } = await loadLoops(dir);
    expect({ ids: [...loops.keys()], errors: errors.map((e) => e.message) }).toEqual({
      ids: ["loop_plain"],
      errors: [`loop id loop_plain is already taken by ${join(dir, "plain.js")}`],
    });
  });

  test("isLoopModuleFile", () => {
    const names = ["a.ts", "a.js", "a.test.ts", "a.test.js", "a.d.ts", "_a.ts", ".a.ts", "a.json", "a.tsx", "a.mjs"];
    expect(names.filter(isLoopModuleFile)).toEqual(["a.ts", "a.js"]);
  });

  test("the example loops of the default HEALTH_LOOPS_DIR load", async () => {
    const { loops, errors } = await loadLoops(join(import.meta.dir, "..", "loops"));
    expect({ ids: [...loops.keys()].sort(), names: [...loops.values()].map((l) => l.name).sort(), errors }).toEqual({
      ids: ["loop_intake", "loop_reminder"],
      names: ["IntakeLoop", "ReminderLoop"],
      errors: [],
    });
  });
});

describe("describeLoadError", () => {
  test("points at the first of several build errors and keeps the others in the message", () => {
    const at = (line: number, column: number) => ({ file: "/l/a.ts", line, column, lineText: "", length: 1 });
    const first = Object.assign(new Error("Unexpected ;"), { position: at(3, 27) });
    const second = Object.assign(new Error('Expected ")"'), { position: at(9, 4) });
    expect(describeLoadError(new AggregateError([first, second], "2 errors building"), "/l/a.ts")).toEqual({
      file: "/l/a.ts",
      line: 3,
      column: 27,
      message: 'Unexpected ; (1 more: /l/a.ts:9:4: Expected ")")',
    });
  });

  test("a value that is not an error is still described", () => {
    expect(describeLoadError("nope", "/l/b.ts")).toEqual({ file: "/l/b.ts", message: "nope" });
    expect(formatLocation({ file: "/l/b.ts" })).toBe("/l/b.ts");
  });
});
