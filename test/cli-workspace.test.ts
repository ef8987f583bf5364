/** The commands a plan contains, for real: init → route → agent build → verify, and plans run by --exec. */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer } from "./support/server.ts";
import { cli, deadServerUrl, json, tempDir } from "./fixtures/cli/cli.ts";

// Every test here runs the CLI as real processes, some against a real server: 5 s is tight on 2 cores.
setDefaultTimeout(20_000);

interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

type LoopModule = Record<string, unknown>;

interface FakeStep {
  do(name: string, a: unknown, b?: unknown): Promise<unknown>;
  sleep(name: string, duration: unknown): Promise<void>;
  sleepUntil(name: string, date: unknown): Promise<void>;
}

/** Enough of HealthStep to run a loop once in-process: steps run inline, sleeps return at once. */
const inlineStep: FakeStep = {
  async do(_name, a, b) {
    const fn = typeof a === "function" ? a : b;
    return typeof fn === "function" ? JSON.parse(JSON.stringify((await fn()) ?? null)) : undefined;
  },
  async sleep() {},
  async sleepUntil() {},
};

describe("health init / route / agent build / verify", () => {
  test("a workspace from scratch passes verify against a live server with stored credentials", async () => {
    await using server = await startTestServer();
    using root = tempDir("health-cli-ws-");
    writeFileSync(join(root, "README.md"), "not empty");
    const init = await cli(["init", "front-desk", "--channel", "sms"], { cwd: root, home: root });
    expect(init.code).toBe(0);
    expect(init.stdout).toContain("./front-desk/");
    const ws = join(root, "front-desk");
    const manifest = JSON.parse(readFileSync(join(ws, "health.json"), "utf8"));
    expect(manifest).toEqual({
      name: "front-desk",
      channel: "sms",
      loops: [{ name: "front-desk", entry: "loops/front-desk.ts" }],
      routes: {},
    });
    const source = readFileSync(join(ws, "loops", "front-desk.ts"), "utf8");
    expect(source).toContain('from "health/loop"');
    expect(source).toContain("export class FrontDeskLoop extends Workflow");
    expect(source).toContain("step.do(");
    expect(JSON.parse(readFileSync(join(ws, "package.json"), "utf8")).dependencies.health).toStartWith("file:");
    // Linked as npm install would: npx health in the workspace is this CLI, never a registry package.
    const npx = Bun.spawn(["npx", "--offline", "--no-install", "health", "--version"], {
      cwd: ws,
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, HOME: `${root}` },
    });
    expect({ code: await npx.exited, out: (await new Response(npx.stdout).text()).trim() }).toEqual({
      code: 0,
      out: JSON.parse(readFileSync(join(import.meta.dir, "..", "package.json"), "utf8")).version,
    });

    const again = await cli(["init", "front-desk", "--channel", "sms"], { cwd: root, home: root });
    expect(again.code).toBe(1);

    const route = await cli(
      [
        "route",
        "--task",
        "intake",
        "--prompt",
        "Route intake texts to front-desk staff; escalate to Dr. Jane Smith at 555-123-4567",
        "--save",
        "--name",
        "intake-sms",
      ],
      { cwd: ws, home: root },
    );
    expect(route.code).toBe(0);
    expect(route.stderr).toContain("redacted");
    const saved = JSON.parse(readFileSync(join(ws, "health.json"), "utf8")).routes["intake-sms"];
    expect(saved).toMatchObject({ task: "intake", model: "auto" });
    expect(saved.prompt).toBe("Route intake texts to front-desk staff; escalate to Dr. [NAME] at [PHONE]");

    const build = await cli(["agent", "build", "--json"], { cwd: ws, home: root });
    expect(build.code).toBe(0);
    const report = json<{ ok: boolean; typecheck: { ran: boolean; ok: boolean }; outputs: Array<{ output: string }> }>(
      build,
    );
    expect(report).toMatchObject({ ok: true, typecheck: { ran: true, ok: true } });
    expect(report.outputs.map((o) => o.output)).toEqual([join(".health", "build", "front-desk.js")]);

    // The bundle carries the SDK and runs: validate, route, acknowledge.
    const loaded: LoopModule = await import(join(ws, ".health", "build", "front-desk.js"));
    const LoopClass = loaded.FrontDeskLoop as new () => {
      run(event: { body: unknown }, step: FakeStep): Promise<unknown>;
    };
    expect(
      await new LoopClass().run({ body: { from: "+15555550100", text: "I need to reschedule" } }, inlineStep),
    ).toMatchObject({
      status: "routed",
      queue: "scheduling",
    });

    expect(
      (await cli(["login", "--server", server.url, "--token", server.systemKey], { cwd: ws, home: root })).code,
    ).toBe(0);
    const verify = await cli(["verify", "--json"], { cwd: ws, home: root });
    const checklist = json<{ ok: boolean; checks: Check[] }>(verify);
    expect(checklist.checks.filter((c) => !c.ok)).toEqual([]);
    expect(checklist.checks.map((c) => c.name)).toEqual([
      "manifest",
      "loop sources",
      "health link",
      "routes",
      "build",
      "server",
      "credentials",
    ]);
    expect(verify.code).toBe(0);

    // A changed source makes the build stale; the checklist says so and exits 1.
    writeFileSync(join(ws, "loops", "front-desk.ts"), `${source}\n// edited\n`);
    const stale = await cli(["verify"], { cwd: ws, home: root });
    expect(stale.code).toBe(1);
    expect(stale.stdout).toMatch(/✖ fail\s+build\s+.*changed since the build/);
    expect(stale.stdout).toMatch(/✔ pass\s+server/);
  });

  test("every channel's template type-checks, builds and runs", async () => {
    using root = tempDir("health-cli-ws-");
    const channels = ["sms", "email", "fax", "web", "voice"] as const;
    const bodies: Record<(typeof channels)[number], unknown> = {
      sms: { from: "+15555550100", text: "question about my bill" },
      email: { from: "a@example.org", subject: "Invoice", text: "hello" },
      fax: { from: "+15555550111", documentType: "records request", pages: 2 },
      web: { form: "appointment-request", replyTo: "a@example.org" },
      voice: { caller: "+15555550122", reason: "billing question" },
    };
    const expected = { sms: "billing", email: "billing", fax: "records", web: "scheduling", voice: "billing" };
    await Promise.all(
      channels.map(async (channel) => {
        const ws = join(root, channel);
        mkdirSync(ws);
        expect((await cli(["init", `${channel}-loop`, "--channel", channel], { cwd: ws, home: root })).code).toBe(0);
        const build = await cli(["agent", "build"], { cwd: ws, home: root });
        expect({ channel, code: build.code, stderr: build.stderr }).toEqual({ channel, code: 0, stderr: "" });
        const loaded: LoopModule = await import(join(ws, ".health", "build", `${channel}-loop.js`));
        const LoopClass = Object.values(loaded)[0] as new () => {
          run(event: { body: unknown }, step: FakeStep): Promise<unknown>;
        };
        const result = await new LoopClass().run({ body: bodies[channel] }, inlineStep);
        expect({ channel, result }).toMatchObject({ channel, result: { status: "routed", queue: expected[channel] } });
        expect(await new LoopClass().run({ body: undefined }, inlineStep)).toMatchObject({ status: "rejected" });
      }),
    );
  });

  test("agent build reports type and syntax errors as file:line:column, exit 1", async () => {
    using ws = tempDir("health-cli-ws-");
    expect((await cli(["init", "broken", "--channel", "web"], { cwd: ws, home: ws })).code).toBe(0);
    const entry = join(ws, "loops", "broken.ts");
    writeFileSync(entry, `${readFileSync(entry, "utf8")}\nexport const wrong: number = "text";\n`);
    const typed = await cli(["agent", "build"], { cwd: ws, home: ws });
    expect(typed.code).toBe(1);
    expect(typed.stderr).toMatch(/loops\/broken\.ts:\d+:\d+: Type 'string' is not assignable to type 'number'/);

    writeFileSync(entry, "export const = ;\n");
    const syntax = await cli(["agent", "build", "--json"], { cwd: ws, home: ws });
    expect(syntax.code).toBe(1);
    const report = json<{ ok: boolean; errors: Array<{ file: string; line: number }> }>(syntax);
    expect(report.ok).toBe(false);
    expect(report.errors[0]).toMatchObject({ file: "loops/broken.ts", line: 1 });
  });

  test("route refuses a clinical prompt (exit 3) and saves nothing; it needs a workspace to save", async () => {
    using ws = tempDir("health-cli-ws-");
    const outside = await cli(
      ["route", "--task", "intake", "--prompt", "Route intake texts", "--save", "--name", "intake"],
      { cwd: ws, home: ws },
    );
    expect(outside.code).toBe(1);
    expect(outside.stderr).toContain("health init");

    expect((await cli(["init", "clinic", "--channel", "email"], { cwd: ws, home: ws })).code).toBe(0);
    const clinical = await cli(
      [
        "route",
        "--task",
        "triage",
        "--prompt",
        "recommend a treatment plan for the patient's symptoms",
        "--save",
        "--name",
        "triage",
      ],
      {
        cwd: ws,
        home: ws,
      },
    );
    expect(clinical.code).toBe(3);
    expect(clinical.stderr).toContain("clinical advice");
    expect(JSON.parse(readFileSync(join(ws, "health.json"), "utf8")).routes).toEqual({});
    const noName = await cli(["route", "--task", "intake", "--prompt", "Route intake", "--save"], {
      cwd: ws,
      home: ws,
    });
    expect(noName.code).toBe(2);
  });

  test("verify fails with a clear line per check when there is no workspace, server or login (exit 1)", async () => {
    using dir = tempDir("health-cli-ws-");
    const result = await cli(["verify", "--server", deadServerUrl()], { cwd: dir, home: dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/✖ fail\s+manifest\s+no health\.json/);
    expect(result.stdout).toMatch(/✖ fail\s+server\s+.*not reachable/);
    expect(result.stdout).toMatch(/✖ fail\s+credentials\s+You are not logged in/);
    expect(result.stdout).toContain("7 of 7 checks failed.");
  });

  test("a plan from health code runs step by step with --exec in an empty directory", async () => {
    using dir = tempDir("health-cli-ws-");
    const planned = await cli(["code", "--prompt", "build an SMS intake agent for our clinic", "--json"], {
      cwd: dir,
      home: dir,
    });
    const plan = json<{ session_id: string; tool_plan: Array<{ step: number; command: string }> }>(planned);
    expect(plan.tool_plan.map((s) => s.command.split(" ").slice(0, 3).join(" "))).toEqual([
      "health init intake-agent",
      "health route --task",
      "health tools list",
      "health agent build",
      "health verify",
    ]);
    for (const step of [1, 2, 3, 4]) {
      const run = await cli(["code", "--exec", "--session-id", plan.session_id, "--step", String(step)], {
        cwd: dir,
        home: dir,
      });
      expect({ step, code: run.code }).toEqual({ step, code: 0 });
    }
    const manifest = JSON.parse(readFileSync(join(dir, "health.json"), "utf8"));
    expect(manifest).toMatchObject({
      name: "intake-agent",
      channel: "sms",
      routes: { "intake-sms": { task: "intake" } },
    });
    const verify = await cli(["verify", "--json", "--server", deadServerUrl()], { cwd: dir, home: dir });
    const failed = json<{ checks: Check[] }>(verify)
      .checks.filter((c) => !c.ok)
      .map((c) => c.name);
    expect(failed).toEqual(["server", "credentials"]);
  });

  test("a plan made in a folder with other files runs its steps in the workspace it creates", async () => {
    using dir = tempDir("health-cli-ws-");
    writeFileSync(join(dir, "notes.md"), "# our clinic's ideas\n");
    const planned = await cli(["code", "--prompt", "build an SMS intake agent for our clinic", "--json"], {
      cwd: dir,
      home: dir,
    });
    const plan = json<{ session_id: string }>(planned);
    const exec = (step: number, cwd: string = dir) =>
      cli(["code", "--exec", "--session-id", plan.session_id, "--step", String(step)], { cwd, home: dir });

    // Step 2 before step 1: told to run step 1 first, nothing runs.
    const early = await exec(2);
    expect(early.code).toBe(1);
    expect(early.stderr).toContain("Step 2 runs in the workspace that step 1 creates, which does not exist yet");
    expect(early.stderr).toContain(`health code --exec --session-id ${plan.session_id} --step 1`);

    const init = await exec(1);
    expect(init.code).toBe(0);
    const ws = join(dir, "intake-agent");
    expect(existsSync(join(ws, "health.json"))).toBe(true);
    const route = await exec(2);
    expect({ code: route.code, stderr: route.stderr }).toMatchObject({ code: 0 });
    expect(route.stdout + route.stderr).toContain("(in ./intake-agent)");
    // From inside the workspace the session is still found (it lives in the folder above).
    expect((await exec(3, ws)).code).toBe(0);
    expect((await exec(4, ws)).code).toBe(0);
    expect(JSON.parse(readFileSync(join(ws, "health.json"), "utf8"))).toMatchObject({
      name: "intake-agent",
      routes: { "intake-sms": { task: "intake" } },
    });
    expect(existsSync(join(dir, "health.json"))).toBe(false);
    // Every step's run file sits with the session, in the folder where the plan was made.
    expect(readdirSync(join(dir, ".health", "code", "runs")).length).toBe(4);
  });
});
