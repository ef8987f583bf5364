/**
 * The interactive planner, driven in a real pseudo-terminal (Bun.Terminal): a turn, Ctrl+H to
 * hosted mode and a hosted turn, then Esc; the terminal must come back as it was.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer } from "./support/server.ts";
import { CLI_BIN, cli, cliEnv, tempDir, until } from "./fixtures/cli/cli.ts";

// Every test here runs the CLI as real processes, some against a real server: 5 s is tight on 2 cores.
setDefaultTimeout(20_000);

interface Screen {
  terminal: Bun.Terminal;
  /** Everything the program wrote, escape sequences included. */
  output(): string;
}

function openTerminal(): Screen {
  let output = "";
  const decoder = new TextDecoder();
  const terminal = new Bun.Terminal({
    cols: 110,
    rows: 32,
    data(_terminal, data) {
      output += decoder.decode(data, { stream: true });
    },
  });
  return { terminal, output: () => output };
}

function auditRows(dir: string): Array<Record<string, unknown>> {
  const path = join(dir, ".health", "code", "audit.jsonl");
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .trim()
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line));
}

async function exited(proc: Bun.Subprocess, timeoutMs = 10_000): Promise<number> {
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error("the REPL did not exit")), timeoutMs).unref(),
  );
  return Promise.race([proc.exited, timeout]);
}

describe("health code (REPL)", () => {
  test("one turn offline, Ctrl+H to hosted and a hosted turn, Esc restores the terminal", async () => {
    await using server = await startTestServer();
    using dir = tempDir("health-cli-repl-");
    expect(
      (await cli(["login", "--server", server.url, "--token", server.systemKey], { cwd: dir, home: dir })).code,
    ).toBe(0);
    const screen = openTerminal();
    await using terminal = screen.terminal;
    const repl = Bun.spawn([process.execPath, CLI_BIN, "code"], {
      cwd: dir,
      env: cliEnv(dir, { NO_COLOR: "" }),
      terminal,
    });

    await until("the status bar", () => screen.output().includes("mode: OFFLINE"));
    expect(screen.output()).toContain("\x1b[?1049h");
    terminal.write("build an SMS intake agent for our clinic, call 555-123-4567\r");
    const first = await until("the first audit row", () => auditRows(dir)[0]);
    expect(first).toMatchObject({ mode: "offline", intent: "build_agent", steps: 5, audit_id: null });
    await until("the plan in the sidebar", () => screen.output().includes("health init intake-agent --channel sms"));
    // The chat shows the redacted prompt, as planned.
    await until("the redacted prompt", () => screen.output().includes("[PHONE]"));

    terminal.write("\x08");
    await until("hosted mode in the status bar", () => screen.output().includes("mode: HOSTED"));
    terminal.write("verify my workspace\r");
    const second = await until("the hosted audit row", () => auditRows(dir)[1]);
    expect(second).toMatchObject({ mode: "hosted", intent: "verify_workspace", session_id: first.session_id });
    expect(String(second.audit_id)).toMatch(/^cli-code-/);

    terminal.write("\x1b");
    expect(await exited(repl)).toBe(0);
    const output = screen.output();
    const left = output.lastIndexOf("\x1b[?1049l");
    expect(left).toBeGreaterThan(0);
    expect(output.slice(output.lastIndexOf("\x1b[?25l"))).toContain("\x1b[?25h");
    expect(output.slice(left)).toContain("Session saved");

    // Audit rows carry no prompt text; the session holds both turns.
    const audit = readFileSync(join(dir, ".health", "code", "audit.jsonl"), "utf8");
    expect(audit).not.toContain("intake agent");
    expect(audit).not.toContain("555-123-4567");
    const session = JSON.parse(
      readFileSync(join(dir, ".health", "code", "sessions", `${String(first.session_id)}.json`), "utf8"),
    );
    expect(session.turns.map((t: { mode: string }) => t.mode)).toEqual(["offline", "hosted"]);

    // Raw mode is off again: a program run next on the same terminal sees a cooked tty.
    const stty = Bun.spawn(["stty", "-a"], { terminal });
    expect(await exited(stty)).toBe(0);
    const settings = await until("stty's report", () => {
      const text = screen.output().slice(output.length);
      return text.includes("icanon") ? text : undefined;
    });
    expect(settings).toMatch(/(^|\s)icanon(\s|$)/m);
    expect(settings).toMatch(/(^|\s)echo(\s|$)/m);
  });

  test("Ctrl+C quits cleanly; without a stored token Ctrl+H says why and stays offline", async () => {
    using dir = tempDir("health-cli-repl-");
    const screen = openTerminal();
    await using terminal = screen.terminal;
    const repl = Bun.spawn([process.execPath, CLI_BIN, "code"], { cwd: dir, env: cliEnv(dir), terminal });
    await until("the status bar", () => screen.output().includes("mode: OFFLINE"));
    terminal.write("\x08");
    await until("the notice", () => screen.output().includes("Hosted mode needs a stored token"));
    expect(screen.output()).not.toContain("mode: HOSTED");
    terminal.write("\x03");
    expect(await exited(repl)).toBe(0);
    expect(screen.output()).toContain("\x1b[?1049l");
    expect(auditRows(dir)).toEqual([]);
  });

  test("when its terminal goes away (the window closes), the REPL quits instead of spinning on a dead input", async () => {
    using dir = tempDir("health-cli-repl-");
    const screen = openTerminal();
    const repl = Bun.spawn([process.execPath, CLI_BIN, "code"], {
      cwd: dir,
      env: cliEnv(dir),
      terminal: screen.terminal,
    });
    try {
      await until("the status bar", () => screen.output().includes("mode: OFFLINE"));
      screen.terminal.close();
      expect(await exited(repl)).toBe(0);
    } finally {
      // Never leave a REPL behind: one once spun a core for half an hour after a failed run.
      repl.kill(9);
    }
  });

  test("without a terminal it says so and exits 2 instead of hanging", async () => {
    using dir = tempDir("health-cli-repl-");
    const result = await cli(["code"], { cwd: dir, home: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("needs a terminal");
  });
});
