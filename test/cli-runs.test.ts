/** health trigger / runs list / runs get against one real server running the fixture loops. */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { startTestServer, type TestServer } from "./support/server.ts";
import { ADMIN, adminEnv } from "./support/trpc.ts";
import { type CliResult, cli, json, tempDir } from "./fixtures/cli/cli.ts";

// Every test here runs the CLI as real processes against a real server: 5 s is tight on 2 cores.
setDefaultTimeout(20_000);

const FIXTURES = join(import.meta.dir, "fixtures", "loops");

interface Started {
  runId: string;
  workflowInstanceId: string;
}

interface Run {
  id: string;
  workflowInstanceId: string;
  loopId: string;
  status: string;
  input?: unknown;
  output?: unknown;
  error: { name: string; message: string } | null;
  trigger: { kind: string; name: string };
  steps: Array<{ name: string; key: string; status: string; attempts: number }>;
}

let server: TestServer;
/** HEALTH_HOME with an admin session (and so the organization) for the server. */
let home: string & Disposable;
/** A HEALTH_HOME with nothing in it: a CI machine with only a token. */
let bare: string & Disposable;
/** loop:run:loop_echo, minted with the CLI. */
let echoToken: string;
/** loop:run (every loop). */
let anyToken: string;

const inHome = (args: string[], env: Record<string, string> = {}, stdin?: string): Promise<CliResult> =>
  cli(args, { cwd: home, home, env, stdin });

async function mint(name: string, scope: string): Promise<string> {
  const created = await inHome(["tokens", "create", "--name", name, "--scope", scope, "--json"]);
  expect(created.code).toBe(0);
  return json<{ token: string }>(created).token;
}

/** Polls the run over HTTP with its token until it has finished; never a fixed sleep. */
async function finished(runId: string, loopId = "loop_echo", token = echoToken): Promise<Run> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const response = await fetch(`${server.url}/loop/${server.defaultOrg.id}/${loopId}/runs/${runId}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const run = (await response.json()) as Run;
    if (["complete", "errored", "terminated"].includes(run.status)) return run;
    if (Date.now() > deadline) throw new Error(`run ${runId} did not finish: ${run.status}`);
    await Bun.sleep(20);
  }
}

/** Neither stream of a command may ever show a token. */
function expectNoSecret(result: CliResult, ...secrets: string[]): void {
  for (const secret of secrets) expect(`${result.stdout}${result.stderr}`).not.toContain(secret);
}

beforeAll(async () => {
  server = await startTestServer({ ...adminEnv, HEALTH_LOOPS_DIR: FIXTURES });
  home = tempDir("health-cli-runs-");
  bare = tempDir("health-cli-runs-bare-");
  const login = await cli(["login", "--server", server.url, "--email", ADMIN.email, "--password-stdin"], {
    cwd: home,
    home,
    stdin: ADMIN.password,
  });
  expect(login.code).toBe(0);
  [echoToken, anyToken] = await Promise.all([mint("echo-ci", "loop:run:loop_echo"), mint("all-loops", "loop:run")]);
});

afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
  home?.[Symbol.dispose]();
  bare?.[Symbol.dispose]();
});

describe("health trigger", () => {
  test("--data with --wait runs the loop to completion and echoes the body (JSON and readable)", async () => {
    const body = { hello: "world", n: [1, 2, 3] };
    const [asJson, readable] = await Promise.all([
      inHome(["trigger", "loop_echo", "--data", JSON.stringify(body), "--wait", "--json"], { HEALTH_TOKEN: echoToken }),
      inHome(["trigger", "loop_echo", "--data", '{"text":"hi there"}', "--wait"], { HEALTH_TOKEN: echoToken }),
    ]);
    expect(asJson.code).toBe(0);
    const result = json<Started & { run: Run }>(asJson);
    expect(result.runId).toMatch(/^run_[A-Za-z0-9]+$/);
    expect(result.run).toMatchObject({
      id: result.runId,
      workflowInstanceId: result.workflowInstanceId,
      loopId: "loop_echo",
      status: "complete",
      input: body,
      output: { seen: { isUndefined: false, body }, counts: [1, 2], nothing: "undefined" },
      error: null,
      trigger: { kind: "token", name: "echo-ci" },
    });
    // Progress goes to stderr, so stdout stays one JSON document.
    expect(asJson.stderr).toContain(result.runId);

    expect(readable.code).toBe(0);
    expect(readable.stdout).toMatch(/✔ Started run run_\w+ \(loop_echo\)/);
    expect(readable.stdout).toMatch(/✔ Run run_\w+ complete in /);
    expect(readable.stdout).toContain('"body":{"text":"hi there"}');
    expectNoSecret(asJson, echoToken);
    expectNoSecret(readable, echoToken);
  });

  test("without data the POST is bodiless: the loop sees event.body === undefined", async () => {
    const started = await inHome(["trigger", "loop_echo", "--token", echoToken, "--json"]);
    expect(started.code).toBe(0);
    const ids = json<Started>(started);
    expect(Object.keys(ids).sort()).toEqual(["runId", "workflowInstanceId"]);
    expectNoSecret(started, echoToken);
    const run = await finished(ids.runId);
    expect(run.output).toEqual({ seen: { isUndefined: true }, counts: [1, 2], nothing: "undefined" });
    expect("input" in run).toBe(false);

    const readable = await inHome(["trigger", "loop_echo"], { HEALTH_TOKEN: echoToken });
    expect(readable.code).toBe(0);
    expect(readable.stdout).toMatch(/Follow it: health runs get run_\w+/);
  });

  test("--data-file - reads the body from standard input", async () => {
    const result = await inHome(
      ["trigger", "loop_echo", "--data-file", "-", "--wait", "--json"],
      {
        HEALTH_TOKEN: echoToken,
      },
      '[1, "two", null]\n',
    );
    expect(result.code).toBe(0);
    expect(json<{ run: Run }>(result).run.input).toEqual([1, "two", null]);
  });

  test("invalid JSON in --data or on stdin is a usage error (exit 2) with the parse error; nothing is sent", async () => {
    // No token anywhere: the data is checked before any credential or request.
    const [data, stdin, both, empty] = await Promise.all([
      cli(["trigger", "loop_echo", "--data", "{not json"], { cwd: bare, home: bare }),
      cli(["trigger", "loop_echo", "--data-file", "-"], { cwd: bare, home: bare, stdin: "[1, 2" }),
      cli(["trigger", "loop_echo", "--data", "1", "--data-file", "x.json"], { cwd: bare, home: bare }),
      cli(["trigger", "loop_echo", "--data", ""], { cwd: bare, home: bare }),
    ]);
    expect(data.code).toBe(2);
    expect(data.stderr).toContain("--data is not valid JSON: ");
    expect(data.stderr).toContain("Run `health trigger --help` for its usage and examples.");
    expect(stdin.code).toBe(2);
    expect(stdin.stderr).toContain("standard input is not valid JSON");
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("either --data or --data-file");
    expect(empty.code).toBe(2);
  });

  test("a token scoped to another loop is forbidden (exit 1); a bad token is rejected; nothing usable says so", async () => {
    const otherLoop = await mint("many-only", "loop:run:loop_many");
    const [forbidden, bogus, none] = await Promise.all([
      inHome(["trigger", "loop_echo", "--data", "{}"], { HEALTH_TOKEN: otherLoop }),
      inHome(["trigger", "loop_echo", "--token", "hlth_not_a_real_token"]),
      inHome(["trigger", "loop_echo"]),
    ]);
    expect(forbidden.code).toBe(1);
    expect(forbidden.stderr).toStartWith("✖ Forbidden: the token from HEALTH_TOKEN may not trigger loop_echo");
    expect(forbidden.stderr).toContain("loop:run:loop_echo");
    expectNoSecret(forbidden, otherLoop);

    expect(bogus.code).toBe(1);
    expect(bogus.stderr).toContain("rejected the token from --token");
    expectNoSecret(bogus, "hlth_not_a_real_token");

    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`No API token to trigger loop_echo on ${server.url}`);
    expect(none.stderr).toContain("HEALTH_TOKEN");
  });

  test("without a session the organization comes from --org or HEALTH_ORG, and is otherwise asked for", async () => {
    const env = { HEALTH_URL: server.url, HEALTH_TOKEN: echoToken };
    const [missing, flag, variable, wrong, unknownLoop] = await Promise.all([
      cli(["trigger", "loop_echo"], { cwd: bare, home: bare, env }),
      cli(["trigger", "loop_echo", "--org", server.defaultOrg.id, "--json"], { cwd: bare, home: bare, env }),
      cli(["trigger", "loop_echo", "--json"], {
        cwd: bare,
        home: bare,
        env: { ...env, HEALTH_ORG: server.defaultOrg.id },
      }),
      cli(["trigger", "loop_echo", "--org", "org_someoneelse"], { cwd: bare, home: bare, env }),
      cli(["trigger", "loop_nope", "--org", server.defaultOrg.id], {
        cwd: bare,
        home: bare,
        env: { ...env, HEALTH_TOKEN: anyToken },
      }),
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("Which organization? Pass --org <org_id>");
    expect(flag.code).toBe(0);
    expect(json<Started>(flag).runId).toMatch(/^run_/);
    expect(variable.code).toBe(0);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("Forbidden");
    expect(wrong.stderr).toContain("another organization");
    expect(unknownLoop.code).toBe(1);
    expect(unknownLoop.stderr).toContain("No loop loop_nope in this organization");
  });

  test("the same --idempotency-key and body give the same run; another body with it is a conflict", async () => {
    const key = `order-${crypto.randomUUID()}`;
    const args = ["trigger", "loop_echo", "--data", '{"order":1}', "--idempotency-key", key, "--json"];
    const first = await inHome(args, { HEALTH_TOKEN: echoToken });
    const second = await inHome(args, { HEALTH_TOKEN: echoToken });
    expect(first.code).toBe(0);
    expect(second.code).toBe(0);
    expect(json<Started>(second)).toEqual(json<Started>(first));
    const replayed = await inHome(args.slice(0, -1), { HEALTH_TOKEN: echoToken });
    expect(replayed.stdout).toContain(`Run ${json<Started>(first).runId} (loop_echo) was already started`);

    const conflict = await inHome(["trigger", "loop_echo", "--data", '{"order":2}', "--idempotency-key", key], {
      HEALTH_TOKEN: echoToken,
    });
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain("Idempotency conflict");
  });

  test("--wait exits 1 when the run errors, with the error in one line", async () => {
    const result = await inHome(["trigger", "loop_throws", "--wait"], { HEALTH_TOKEN: anyToken });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/✖ Run run_\w+ errored after .*: Error: the step exploded/);
  });

  test("a loop id that is not one is a usage error that suggests the loop_ form", async () => {
    const result = await cli(["trigger", "echo"], { cwd: bare, home: bare });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("Did you mean loop_echo?");
  });
});

describe("health runs", () => {
  test("list --json has the run; the table shows id, loop, status, started, duration and the trigger tag", async () => {
    const started = json<Started>(
      await inHome(["trigger", "loop_echo", "--data", '{"listed":true}', "--json"], { HEALTH_TOKEN: echoToken }),
    );
    await finished(started.runId);
    const [list, filtered, table] = await Promise.all([
      inHome(["runs", "list", "--json", "--limit", "100"]),
      inHome(["runs", "list", "--json", "--loop", "loop_throws", "--status", "errored"]),
      inHome(["runs", "list", "--loop", "loop_echo"]),
    ]);
    expect(list.code).toBe(0);
    const page = json<{ runs: Run[]; nextCursor: string | null }>(list);
    expect(page.runs.find((run) => run.id === started.runId)).toMatchObject({
      loopId: "loop_echo",
      status: "complete",
      input: { listed: true },
      trigger: { kind: "token", name: "echo-ci" },
    });
    expect(json<{ runs: Run[] }>(filtered).runs.every((run) => run.loopId === "loop_throws")).toBe(true);

    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID\s+LOOP\s+STATUS\s+STARTED\s+DURATION\s+TAG$/);
    expect(lines.find((line) => line.startsWith(started.runId))).toMatch(
      /loop_echo\s+complete\s+(?:just now|\d+ s ago)\s+[\d.]+m?s\s+token:echo-ci$/,
    );
  });

  test("list pages with --limit and prints the command for the next page", async () => {
    const first = await inHome(["runs", "list", "--limit", "1", "--loop", "loop_echo"]);
    expect(first.code).toBe(0);
    const next = /--cursor (\S+)/.exec(first.stdout)?.[1];
    expect(first.stdout).toContain("More: health runs list --loop loop_echo --limit 1 --cursor ");
    expect(next).toBeString();
    const [second, badLimit, badStatus] = await Promise.all([
      inHome(["runs", "list", "--limit", "1", "--loop", "loop_echo", "--cursor", next ?? "", "--json"]),
      inHome(["runs", "list", "--limit", "500"]),
      inHome(["runs", "list", "--status", "done"]),
    ]);
    expect(second.code).toBe(0);
    const firstId = first.stdout.split("\n")[1]?.split(/\s+/)[0];
    expect(json<{ runs: Run[] }>(second).runs[0]?.id).not.toBe(firstId);
    expect(badLimit.code).toBe(2);
    expect(badStatus.code).toBe(2);
  });

  test("get shows status, input, output and every step; --json is the run record", async () => {
    const started = json<Started>(
      await inHome(["trigger", "loop_echo", "--data", '{"shown":"yes"}', "--json"], { HEALTH_TOKEN: echoToken }),
    );
    await finished(started.runId);
    const [readable, asJson, missing, badId] = await Promise.all([
      inHome(["runs", "get", started.runId]),
      inHome(["runs", "get", started.runId, "--json"]),
      inHome(["runs", "get", "run_doesnotexist"]),
      inHome(["runs", "get", "nope"]),
    ]);
    expect(readable.code).toBe(0);
    expect(readable.stdout).toMatch(new RegExp(`^Run\\s+${started.runId}$`, "m"));
    expect(readable.stdout).toMatch(/^Status\s+complete$/m);
    expect(readable.stdout).toMatch(/^Input\s+\{"shown":"yes"\}$/m);
    expect(readable.stdout).toMatch(/^Output\s+\{"seen":\{"isUndefined":false,"body":\{"shown":"yes"\}\}/m);
    expect(readable.stdout).toMatch(/^#\s+STEP\s+STATUS\s+ATTEMPTS\s+STARTED\s+RESULT OR ERROR$/m);
    expect(readable.stdout).toMatch(/^1\s+look\s+complete\s+1\s+.*\{"isUndefined":false/m);
    expect(readable.stdout).toMatch(/^2\s+count\s+complete\s+1\s+.*\s1$/m);
    expect(readable.stdout).toMatch(/^3\s+count\s+complete\s+1\s+.*\s2$/m);
    expect(readable.stdout).toMatch(/^4\s+nothing\s+complete\s+1\s+/m);

    const run = json<Run>(asJson);
    expect(run).toMatchObject({ id: started.runId, status: "complete", input: { shown: "yes" } });
    expect(run.steps.map((step) => step.key)).toEqual(["look", "count", "count#2", "nothing"]);

    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("No run run_doesnotexist in this organization");
    expect(badId.code).toBe(2);
  });

  test("get shows a failed step's error", async () => {
    const started = json<Started>(await inHome(["trigger", "loop_throws", "--json"], { HEALTH_TOKEN: anyToken }));
    await finished(started.runId, "loop_throws", anyToken);
    const result = await inHome(["runs", "get", started.runId]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Status\s+errored$/m);
    expect(result.stdout).toMatch(/^Error\s+Error: the step exploded$/m);
    expect(result.stdout).toMatch(/^2\s+explode\s+errored\s+\d+\s+.*Error: the step exploded$/m);
  });

  test("get lists the failed tries of a step that succeeded on a retry", async () => {
    const started = json<Started>(
      await inHome(["trigger", "loop_flaky", "--data", '{"failures":2}', "--json"], { HEALTH_TOKEN: anyToken }),
    );
    await finished(started.runId, "loop_flaky", anyToken);
    const result = await inHome(["runs", "get", started.runId]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^1\s+call\s+complete\s+3\s+/m);
    expect(result.stdout).toMatch(
      /\nFailed tries\n {2}1 call, try 1 \((just now|\d+ s ago)\): Error: the gateway answered 503 \(try 1\)\n {2}1 call, try 2 \((just now|\d+ s ago)\): Error: the gateway answered 503 \(try 2\)\n$/,
    );
  });

  test("runs needs an admin session", async () => {
    const result = await cli(["runs", "list", "--server", server.url], { cwd: bare, home: bare });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("health login");
  });
});

describe("help", () => {
  test("runs and trigger are listed, and each teaches with examples", async () => {
    const commands = [[], ["runs"], ["runs", "list"], ["runs", "get"], ["trigger"]];
    const results = await Promise.all(
      commands.map((command) => cli([...command, "--help"], { cwd: bare, home: bare })),
    );
    results.forEach((result, i) => {
      expect({ command: commands[i], code: result.code }).toEqual({ command: commands[i], code: 0 });
      expect(result.stdout).toContain("Examples:");
    });
    expect(results[0]?.stdout).toContain("health trigger loop_intake");
    expect(results[0]?.stdout).toContain("health runs list");
    expect(results[4]?.stdout).toContain("HEALTH_TOKEN");
    expect(results[4]?.stdout).toContain("--org, else HEALTH_ORG, else the organization of your admin session");
  });
});

describe("health trigger --wait when the server goes away", () => {
  test("says the run goes on on the server and how to check it later (exit 1)", async () => {
    const own = await startTestServer({ ...adminEnv, HEALTH_LOOPS_DIR: FIXTURES });
    using dir = tempDir("health-cli-wait-");
    try {
      const login = await cli(["login", "--server", own.url, "--email", ADMIN.email, "--password-stdin"], {
        cwd: dir,
        home: dir,
        stdin: ADMIN.password,
      });
      expect(login.code).toBe(0);
      const created = await cli(["tokens", "create", "--name", "wait", "--scope", "loop:run", "--json"], {
        cwd: dir,
        home: dir,
      });
      const token = json<{ token: string }>(created).token;
      const body = JSON.stringify({ logFile: join(dir, "sleeper.log"), sleepMs: 60_000 });
      const waiting = cli(["trigger", "loop_sleeper", "--data", body, "--wait"], {
        cwd: dir,
        home: dir,
        env: { HEALTH_TOKEN: token },
      });
      // Wait for the run to be asleep on the server, then take the server away.
      const deadline = Date.now() + 10_000;
      let runId: string | undefined;
      while (runId === undefined && Date.now() < deadline) {
        const listed = await cli(["runs", "list", "--loop", "loop_sleeper", "--json"], { cwd: dir, home: dir });
        const found = json<{ runs: Array<{ id: string; status: string }> }>(listed).runs.find(
          (run) => run.status === "sleeping",
        );
        runId = found?.id;
        if (runId === undefined) await Bun.sleep(50);
      }
      expect(runId).toBeDefined();
      await own.stop();
      const result = await waiting;
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`Lost the server while waiting`);
      expect(result.stderr).toContain(`run ${runId} goes on there`);
      expect(result.stderr).toContain(`health runs get ${runId}`);
    } finally {
      await own[Symbol.asyncDispose]();
    }
  });
});

describe("health usage", () => {
  test("shows planning and runs over a window, with the command behind the loops that fail", async () => {
    const failed = await inHome(["trigger", "loop_throws", "--data", '{"where":"run"}', "--wait", "--json"], {
      HEALTH_TOKEN: anyToken,
    });
    expect(json<{ run: Run }>(failed).run.status).toBe("errored");
    // The server flushes its rollups every 50 ms in tests: poll the JSON until the run shows.
    const deadline = Date.now() + 5_000;
    let usage: { runs: { errored: number; failingLoops: Array<{ loopId: string; errored: number }> } } | undefined;
    while (Date.now() < deadline) {
      const result = await inHome(["usage", "--window", "1h", "--json"]);
      expect(result.code).toBe(0);
      usage = json(result);
      if ((usage?.runs.errored ?? 0) > 0) break;
      await Bun.sleep(50);
    }
    expect(usage?.runs.failingLoops[0]).toMatchObject({ loopId: "loop_throws" });

    const readable = await inHome(["usage", "--window", "1h", "--loop", "loop_throws"]);
    expect(readable.code).toBe(0);
    expect(readable.stdout).toContain("Usage over the last hour (loop loop_throws)");
    expect(readable.stdout).toContain("Planning");
    expect(readable.stdout).toMatch(/errored\s+[1-9]/);
    expect(readable.stdout).toContain("health runs list --loop loop_throws --status errored");

    const bad = await inHome(["usage", "--window", "2d"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--window must be one of 1h, 24h, 7d, 30d");
    const badToken = await inHome(["usage", "--token", "abc"]);
    expect(badToken.code).toBe(2);
    expect(badToken.stderr).toContain("--token must be a token id");
    // Without a session it says how to get one.
    const signedOut = await cli(["usage"], { cwd: bare, home: bare, env: { HEALTH_URL: server.url } });
    expect(signedOut.code).toBe(1);
    expect(signedOut.stderr).toContain("health login");
  });
});
