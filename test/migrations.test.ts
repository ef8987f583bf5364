/**
 * The checked-in migrations are what the schema files say: drizzle-kit, run against a copy of each
 * dialect's folder, finds nothing to generate. Fails when a table changed without
 * `npm run db:generate` (which writes both drizzle/ and drizzle-pg/).
 */
import { describe, expect, test } from "bun:test";
import { cpSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { tempDir } from "./support/temp-dir.ts";

const root = join(import.meta.dir, "..");
const drizzleKit = join(root, "node_modules", ".bin", "drizzle-kit");

const dialects = [
  { dialect: "sqlite", schema: "./schema/tables.ts", folder: "drizzle" },
  { dialect: "postgresql", schema: "./schema/pg-tables.ts", folder: "drizzle-pg" },
] as const;

describe("migrations", () => {
  test.each(dialects)("$folder/ is up to date with $schema", async ({ dialect, schema, folder }) => {
    using dir = tempDir("health-migrations-");
    const copy = join(dir, folder);
    cpSync(join(root, folder), copy, { recursive: true });
    // drizzle-kit joins `--out` to the working directory, so it is given a relative path.
    const proc = Bun.spawn(
      [drizzleKit, "generate", "--dialect", dialect, "--schema", schema, "--out", relative(root, copy)],
      { cwd: root, stdout: "pipe", stderr: "pipe" },
    );
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    expect({ code, said: `${out}${err}`.includes("No schema changes") }).toEqual({ code: 0, said: true });
    expect(readdirSync(copy).sort()).toEqual(readdirSync(join(root, folder)).sort());
  });
});
