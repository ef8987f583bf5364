/**
 * The README's HTTP examples, run as written against a real server: only the placeholders
 * (address, system key, token, organization) are filled in. A drifted example fails here.
 */
import { expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { loadLoops } from "../core/loop/registry.ts";
import { openDatabase } from "../server/db.ts";
import { SqliteTokenStore } from "../server/services/token-store-sqlite.ts";
import { startTestServer, tempDir } from "./support/server.ts";

const ROOT = resolve(import.meta.dir, "..");

/** The first ```sh block after `heading`. */
function shellBlockAfter(markdown: string, heading: string): string {
  const from = markdown.indexOf(heading);
  if (from === -1) throw new Error(`README has no "${heading}"`);
  const match = /```sh\n([\s\S]*?)```/.exec(markdown.slice(from));
  if (match?.[1] === undefined) throw new Error(`no sh block after "${heading}"`);
  return match[1];
}

/** Replaces `NAME=placeholder` assignments, failing if the README no longer has them. */
function fill(script: string, values: Record<string, string>): string {
  let filled = script;
  for (const [name, value] of Object.entries(values)) {
    const assignment = new RegExp(`\\b${name}=\\S+`);
    if (!assignment.test(filled)) throw new Error(`the example no longer assigns ${name}`);
    filled = filled.replace(assignment, `${name}=${value}`);
  }
  return filled;
}

test("the README's curl examples run as written", async () => {
  using dir = tempDir();
  await using server = await startTestServer({ HEALTH_LOOPS_DIR: join(ROOT, "loops") }, dir);
  const db = openDatabase(`file:${server.dbPath}`);
  const { token } = new SqliteTokenStore(db).createSync({
    orgId: server.defaultOrg.id,
    name: "readme",
    scopes: ["loop:run"],
    actor: { kind: "system", id: "test" },
  });
  db.close();

  const example = shellBlockAfter(readFileSync(join(ROOT, "README.md"), "utf8"), "## The HTTP API");
  const script = fill(example, { BASE: server.url, KEY: server.systemKey, TOKEN: token, ORG: server.defaultOrg.id });
  // Asynchronously: the server answers from this very process.
  const run = Bun.spawn(["bash", "-euo", "pipefail", "-c", script], { cwd: dir, stdout: "pipe", stderr: "pipe" });
  const [output, errors, exitCode] = await Promise.all([
    new Response(run.stdout).text(),
    new Response(run.stderr).text(),
    run.exited,
  ]);
  expect(errors).toBe("");
  expect(exitCode).toBe(0);

  // The plan, with its headers (-i).
  expect(output).toMatch(/^HTTP\/1\.1 200 OK/);
  expect(output).toMatch(/x-health-cache: miss/i);
  expect(output).toContain('"execution_target":"local_terminal"');
  // The account, the trigger's 202 body, then the run read back.
  expect(output).toContain('"company":"system"');
  expect(output).toMatch(/\{"runId":"run_\w+","workflowInstanceId":"wfi_\w+"\}/);
  expect(output).toMatch(/"loopId":"loop_intake"/);
  expect(output).toContain('health_http_requests_total{route="/cli/code/sessions",method="POST",status="200"} 1\n');
  expect(output).toMatch(/"status":"(queued|running|complete)"/);
});

test("the README's loop, copied into loops/ as it says, is formatted and loads from any folder", async () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const from = readme.indexOf("## Writing a loop");
  const source = /```ts\n([\s\S]*?)```/.exec(readme.slice(from))?.[1] ?? "";
  const file = /^\/\/ (loops\/[\w-]+\.ts)/.exec(source)?.[1];
  expect(file).toBe("loops/triage.ts");
  // `npm test` runs `biome check .`: a copy of the snippet must not make it fail.
  const biome = Bun.spawn([join(ROOT, "node_modules/.bin/biome"), "format", "--stdin-file-path", file ?? "x.ts"], {
    cwd: ROOT,
    stdin: new TextEncoder().encode(source),
    stdout: "pipe",
  });
  expect(await new Response(biome.stdout).text()).toBe(source);
  // Loaded by the server's registry, from a folder of its own, as loop_triage.
  using dir = tempDir();
  writeFileSync(join(dir, "triage.ts"), source);
  const loaded = await loadLoops(dir);
  expect(loaded.errors).toEqual([]);
  expect([...loaded.loops.keys()]).toEqual(["loop_triage"]);
});
