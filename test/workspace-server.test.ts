/**
 * Following a plan produces a loop the server can run: `health init` → `health agent build`
 * with the real CLI, then the real server loads the built bundle from its loops folder and a
 * trigger runs it to completion.
 */
import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cli, tempDir } from "./fixtures/cli/cli.ts";
import { startTestServer } from "./support/server.ts";
import { adminEnv, signIn } from "./support/trpc.ts";

test("a workspace scaffolded and built by the CLI runs on the server", async () => {
  using root = tempDir("health-ws-server-");
  // An empty directory is scaffolded in place (see `health init --help`).
  const ws: string = root;
  expect((await cli(["init", "front-desk", "--channel", "sms"], { cwd: ws, home: root })).code).toBe(0);
  expect((await cli(["agent", "build"], { cwd: ws, home: root })).code).toBe(0);

  await using server = await startTestServer({ ...adminEnv, HEALTH_LOOPS_DIR: join(ws, ".health", "build") });
  const { client } = await signIn(server.url);
  expect((await client.loops.list.query()).map((l) => l.id)).toEqual(["loop_front-desk"]);
  const { token } = await client.tokens.create.mutate({ name: "ws", scopes: ["loop:run:loop_front-desk"] });

  const base = `${server.url}/loop/${server.defaultOrg.id}/loop_front-desk`;
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const started = await fetch(base, {
    method: "POST",
    headers,
    body: JSON.stringify({ from: "+15555550100", text: "I need to reschedule" }),
  });
  expect(started.status).toBe(202);
  const { runId } = await started.json();
  let run: { status: string; output: unknown; steps: unknown[] } = { status: "", output: null, steps: [] };
  for (const deadline = Date.now() + 15_000; Date.now() < deadline; await Bun.sleep(20)) {
    run = await (await fetch(`${base}/runs/${runId}`, { headers })).json();
    if (["complete", "errored", "terminated"].includes(run.status)) break;
  }
  expect(run.status).toBe("complete");
  expect(run.output).toMatchObject({ status: "routed", queue: "scheduling" });
  expect(run.steps.length).toBeGreaterThan(0);
}, 60_000);

test("a loops folder outside the repository imports the SDK as health/loop and runs", async () => {
  using root = tempDir("health-loops-anywhere-");
  const loops = join(root, "loops");
  mkdirSync(loops);
  // A helper module imports the SDK too: the name must resolve for every file in the folder.
  writeFileSync(
    join(loops, "_shared.ts"),
    'import { NonRetryableError } from "health/loop";\nexport const isSdkError = (e: unknown) => e instanceof NonRetryableError;\n',
  );
  writeFileSync(
    join(loops, "echo.ts"),
    [
      'import { Workflow, type HealthEvent, type HealthStep } from "health/loop";',
      'import { isSdkError } from "./_shared.ts";',
      "export default class Echo extends Workflow<{ text: string }> {",
      "  async run(event: HealthEvent<{ text: string }>, step: HealthStep) {",
      '    const text = await step.do("echo", async () => event.body.text);',
      "    return { text, sdk: isSdkError(new Error()) };",
      "  }",
      "}",
      "",
    ].join("\n"),
  );
  await using server = await startTestServer({ ...adminEnv, HEALTH_LOOPS_DIR: loops });
  const { client } = await signIn(server.url);
  expect((await client.loops.list.query()).map((l) => l.id)).toEqual(["loop_echo"]);
  const { token } = await client.tokens.create.mutate({ name: "anywhere", scopes: ["loop:run:loop_echo"] });
  const base = `${server.url}/loop/${server.defaultOrg.id}/loop_echo`;
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const started = await fetch(base, { method: "POST", headers, body: JSON.stringify({ text: "hi" }) });
  expect(started.status).toBe(202);
  const { runId } = await started.json();
  let run: { status: string; output: unknown } = { status: "", output: null };
  for (const deadline = Date.now() + 15_000; Date.now() < deadline; await Bun.sleep(20)) {
    run = await (await fetch(`${base}/runs/${runId}`, { headers })).json();
    if (["complete", "errored", "terminated"].includes(run.status)) break;
  }
  expect(run).toMatchObject({ status: "complete", output: { text: "hi", sdk: false } });
}, 60_000);
