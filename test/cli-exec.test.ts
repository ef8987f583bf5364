/** health code --exec: a saved step, re-checked by the gate, run without a shell, recorded. */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cli, deadServerUrl, json, tempDir } from "./fixtures/cli/cli.ts";
import type { RunRecord } from "../cli/code/store.ts";

// Every test here runs the CLI as real processes, some against a real server: 5 s is tight on 2 cores.
setDefaultTimeout(20_000);

function runRecords(dir: string): RunRecord[] {
  const runs = join(dir, ".health", "code", "runs");
  return readdirSync(runs)
    .filter((name) => /^run-[0-9a-f-]{36}\.json$/.test(name))
    .map((name) => JSON.parse(readFileSync(join(runs, name), "utf8")) as RunRecord);
}

async function plan(
  dir: string,
  prompt: string,
): Promise<{ session_id: string; tool_plan: Array<{ step: number; command: string }> }> {
  const result = await cli(["code", "--prompt", prompt, "--json"], { cwd: dir, home: dir });
  expect(result.code).toBe(0);
  return json(result);
}

describe("health code --exec", () => {
  test("runs a saved step as the CLI itself, streams its output and writes the run file", async () => {
    using dir = tempDir("health-cli-exec-");
    const session = await plan(dir, "which tools can my agent use?");
    expect(session.tool_plan[0]?.command).toBe("health tools list");

    const result = await cli(["code", "--exec", "--session-id", session.session_id, "--step", "1"], {
      cwd: dir,
      home: dir,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("step.sleepUntil");
    expect(result.stdout).toMatch(/Step 1 exited with code 0\. Run record: .*run-[0-9a-f-]{36}\.json/);

    const [record] = runRecords(dir);
    expect(Object.keys(record ?? {}).sort()).toEqual([
      "argv",
      "blocked_reason",
      "command",
      "exit_code",
      "finished_at",
      "run_id",
      "session_id",
      "started_at",
      "stderr",
      "stdout",
      "step",
      "timed_out",
    ]);
    expect(record).toMatchObject({
      session_id: session.session_id,
      step: 1,
      command: "health tools list",
      argv: ["tools", "list"],
      blocked_reason: null,
      exit_code: 0,
      timed_out: false,
    });
    expect(record?.stdout).toContain("step.do");
    expect(Date.parse(record?.finished_at ?? "")).toBeGreaterThanOrEqual(Date.parse(record?.started_at ?? ""));

    const asJson = await cli(["code", "--exec", "--session-id", session.session_id, "--step", "1", "--json"], {
      cwd: dir,
      home: dir,
    });
    expect(asJson.code).toBe(0);
    expect(json<RunRecord>(asJson)).toMatchObject({ exit_code: 0, argv: ["tools", "list"] });
  });

  test("a step number out of range is a usage error that names the valid range (exit 2)", async () => {
    using dir = tempDir("health-cli-exec-");
    const session = await plan(dir, "build an SMS intake agent");
    const count = session.tool_plan.length;
    const result = await cli(["code", "--exec", "--session-id", session.session_id, "--step", String(count + 1)], {
      cwd: dir,
      home: dir,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`valid steps are 1-${count}`);
    const zero = await cli(["code", "--exec", "--session-id", session.session_id, "--step", "0"], {
      cwd: dir,
      home: dir,
    });
    expect(zero.code).toBe(2);
    const notUuid = await cli(["code", "--exec", "--session-id", "../../etc/passwd", "--step", "1"], {
      cwd: dir,
      home: dir,
    });
    expect(notUuid.code).toBe(2);
    expect(notUuid.stderr).toContain("must be a UUID");
  });

  test("a missing session is a clear failure (exit 1)", async () => {
    using dir = tempDir("health-cli-exec-");
    const result = await cli(["code", "--exec", "--session-id", crypto.randomUUID(), "--step", "1"], {
      cwd: dir,
      home: dir,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("No saved session");
  });

  test("a tampered session is re-checked: `; rm -rf ~` is blocked, not run (exit 3), and the run file says why", async () => {
    using dir = tempDir("health-cli-exec-");
    const session = await plan(dir, "which tools can my agent use?");
    const path = join(dir, ".health", "code", "sessions", `${session.session_id}.json`);
    const saved = JSON.parse(readFileSync(path, "utf8"));
    saved.tool_plan[0].command = "health tools list; rm -rf ~";
    writeFileSync(path, JSON.stringify(saved));
    // A canary: if anything ran through a shell, this file would go.
    writeFileSync(join(dir, "canary"), "still here");

    const result = await cli(["code", "--exec", "--session-id", session.session_id, "--step", "1"], {
      cwd: dir,
      home: dir,
      env: { HOME: dir },
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain("blocked and was not run");
    expect(result.stderr).toContain("metacharacter");
    const [record] = runRecords(dir);
    expect(record).toMatchObject({
      command: "health tools list; rm -rf ~",
      argv: null,
      exit_code: null,
      stdout: "",
      stderr: "",
    });
    expect(record?.blocked_reason).toContain("`;`");
    expect(readFileSync(join(dir, "canary"), "utf8")).toBe("still here");

    // A step that would chain another execution is refused by the gate as well.
    saved.tool_plan[0].command = `health code --exec --session-id ${session.session_id} --step 1`;
    writeFileSync(path, JSON.stringify(saved));
    const chained = await cli(["code", "--exec", "--session-id", session.session_id, "--step", "1", "--json"], {
      cwd: dir,
      home: dir,
    });
    expect(chained.code).toBe(3);
    expect(json<RunRecord>(chained).blocked_reason).toContain("--exec");
  });

  test("a step that runs past --timeout is stopped, recorded as timed out, exit 1", async () => {
    using dir = tempDir("health-cli-exec-");
    // A server that accepts the connection and never answers: verify's health check hangs on it.
    const silent = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Promise<Response>(() => {}) });
    try {
      const session = await plan(dir, "verify my workspace");
      expect(session.tool_plan[0]?.command).toBe("health verify");
      const started = Date.now();
      const result = await cli(
        ["code", "--exec", "--session-id", session.session_id, "--step", "1", "--timeout", "1", "--json"],
        {
          cwd: dir,
          home: dir,
          env: { HEALTH_URL: `http://127.0.0.1:${silent.port}` },
        },
      );
      expect(result.code).toBe(1);
      expect(json<RunRecord>(result)).toMatchObject({ timed_out: true, exit_code: null, blocked_reason: null });
      expect(Date.now() - started).toBeLessThan(2_900);
    } finally {
      await silent.stop(true);
    }
  });

  test("stdin is closed and not a terminal: an interactive step (the REPL) fails fast instead of waiting", async () => {
    using dir = tempDir("health-cli-exec-");
    const session = await plan(dir, "which tools can my agent use?");
    const path = join(dir, ".health", "code", "sessions", `${session.session_id}.json`);
    const saved = JSON.parse(readFileSync(path, "utf8"));
    // `health code` alone is the REPL; the gate allows it, and it needs a terminal.
    saved.tool_plan[0].command = "health code";
    writeFileSync(path, JSON.stringify(saved));
    const result = await cli(["code", "--exec", "--session-id", session.session_id, "--step", "1", "--json"], {
      cwd: dir,
      home: dir,
    });
    const record = json<RunRecord>(result);
    expect(record.exit_code).toBe(2);
    expect(record.stderr).toContain("needs a terminal");
  });

  test("the step's exit code is passed on (health login against a server that is down fails fast)", async () => {
    using dir = tempDir("health-cli-exec-");
    const session = await plan(dir, "log me in to the server");
    expect(session.tool_plan[0]?.command).toBe("health login");
    // health login alone is the device link: it needs no stdin, only a server, and this one is down.
    const result = await cli(["code", "--exec", "--session-id", session.session_id, "--step", "1", "--json"], {
      cwd: dir,
      home: dir,
      env: { HEALTH_URL: deadServerUrl() },
    });
    expect(result.code).toBe(1);
    const record = json<RunRecord>(result);
    expect(record.exit_code).toBe(1);
    expect(record.stderr).toContain("Cannot reach the health server");
  });
});
