/**
 * The interactive planner, driven in a real pseudo-terminal (Bun.Terminal): a turn, Ctrl+H to
 * hosted mode and a hosted turn, then Esc; the terminal must come back as it was.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { renderFrame, wrapIndented } from "../cli/repl/layout.ts";
import { decodeKeys } from "../cli/repl/terminal.ts";
import { startTestServer } from "./support/server.ts";
import { CLI_BIN, cli, cliEnv, tempDir, until } from "./fixtures/cli/cli.ts";

// Every test here runs the CLI as real processes, some against a real server: 5 s is tight on 2 cores.
setDefaultTimeout(20_000);

interface Screen {
  terminal: Bun.Terminal;
  /** Everything the program wrote, escape sequences included. */
  output(): string;
}

function openTerminal(size: { cols: number; rows: number } = { cols: 110, rows: 32 }): Screen {
  let output = "";
  const decoder = new TextDecoder();
  const terminal = new Bun.Terminal({
    ...size,
    data(_terminal, data) {
      output += decoder.decode(data, { stream: true });
    },
  });
  return { terminal, output: () => output };
}

/** The rows of the last frame the REPL drew, without styling (it draws whole frames, row by row). */
function lastFrame(output: string): string[] {
  const frame = output.slice(output.lastIndexOf("\x1b[?2026h"));
  const rows: string[] = [];
  for (const match of frame.matchAll(/\x1b\[(\d+);1H([^\x1b]*(?:\x1b\[[0-9;]*m[^\x1b]*)*)/g)) {
    rows[Number(match[1]) - 1] = Bun.stripANSI(match[2] ?? "");
  }
  return rows;
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

  test("at 80 columns: /help, Up recalls the last input, /run runs a step in place, PgUp scrolls back", async () => {
    using dir = tempDir("health-cli-repl-");
    const screen = openTerminal({ cols: 80, rows: 24 });
    await using terminal = screen.terminal;
    const repl = Bun.spawn([process.execPath, CLI_BIN, "code"], { cwd: dir, env: cliEnv(dir), terminal });
    const frame = () => lastFrame(screen.output());
    await until("the status bar", () => screen.output().includes("mode: OFFLINE"));
    // Nothing cut at 80 columns: the status bar keeps its mode and help key, the welcome wraps.
    expect(frame()[0]).toMatch(/^ health \[mode: OFFLINE \(no network\)\] .*\/help $/);
    const welcome = frame()
      .slice(1, -2)
      .map((row) => row.split("│")[0]?.trim())
      .join(" ");
    expect(welcome).toContain("Describe what you want to build; each turn is classified, redacted and planned.");

    terminal.write("/help\r");
    await until("the help", () => frame().some((row) => row.includes("/run <n>   run step n of the plan")));
    terminal.write("build an SMS intake agent for our clinic\r");
    await until("the plan", () => auditRows(dir).length === 1 && frame().some((row) => row.includes("1. health init")));
    terminal.write("\x1b[A");
    await until("the last input recalled", () => frame().at(-1)?.startsWith("› build an SMS intake agent"));
    terminal.write("\x1b[A");
    await until("the one before", () => frame().at(-1)?.trimEnd() === "› /help");
    terminal.write("\x15/run 1\r");
    await until("the step's outcome", () => frame().some((row) => row.includes("Step 1 exited with code 0")));
    expect(existsSync(join(dir, "health.json"))).toBe(true);
    expect(frame().some((row) => row.includes("Created the sms workspace"))).toBe(true);
    terminal.write("/run 9\r");
    await until("the range error", () => frame().some((row) => row.includes("Step 9 is out of range")));

    terminal.write("\x1b[5~");
    await until("the scroll-back marker", () => frame().some((row) => /newer lines? · PgDn/.test(row)));
    terminal.write("\x1b[6~");
    await until("back at the newest", () => !frame().some((row) => /newer lines? · PgDn/.test(row)));
    terminal.write("\x1b");
    expect(await exited(repl)).toBe(0);
  });

  test("without a terminal it says so and exits 2 instead of hanging", async () => {
    using dir = tempDir("health-cli-repl-");
    const result = await cli(["code"], { cwd: dir, home: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("needs a terminal");
  });
});

describe("the REPL's screen and keys", () => {
  const view = {
    mode: "offline" as const,
    server: undefined,
    sessionId: "3f0c9a52-7d1e-4b8a-9c3f-2e6d1a4b5c7d",
    turns: 0,
    chat: [],
    plan: undefined,
    input: "",
    busy: false,
    scroll: 0,
  };

  test("every line fits the width, and the status bar drops hints before it cuts the mode", () => {
    for (const cols of [40, 60, 80, 120]) {
      const frame = renderFrame(view, { cols, rows: 24, color: false });
      expect(frame.lines.map((line) => Bun.stringWidth(line))).toEqual(frame.lines.map(() => cols));
      expect(frame.lines[0]).toContain(cols >= 48 ? "mode: OFFLINE (no network)" : "OFFLINE");
    }
    const hosted = renderFrame(
      { ...view, mode: "hosted", server: "http://127.0.0.1:3000" },
      { cols: 80, rows: 24, color: false },
    );
    expect(hosted.lines[0]).toContain("mode: HOSTED → http://127.0.0.1:3000");
  });

  test("wrapped lines keep their indentation, past a list marker too", () => {
    expect(wrapIndented("  - the loop routes each form to the queue that handles it", 30)).toEqual([
      "  - the loop routes each form",
      "    to the queue that handles",
      "    it",
    ]);
  });

  test("scrolling back shows older lines and says how many newer ones are below", () => {
    const chat = Array.from({ length: 30 }, (_, i) => ({
      who: "notice" as const,
      tone: "warn" as const,
      text: `n${i}`,
    }));
    const frame = renderFrame({ ...view, chat, scroll: 10 }, { cols: 100, rows: 20, color: false });
    const body = frame.lines.slice(1, -2).map((line) => line.split("│")[0]?.trim());
    expect(body.at(-1)).toBe("── ↓ 10 newer lines · PgDn ──");
    expect(body[0]).toMatch(/^── ↑ \d+ older · PgUp ──$/);
    expect(frame.maxScroll).toBeGreaterThan(10);
  });

  test("arrows and PageUp/PageDown are keys; other escape sequences are ignored", () => {
    expect(decodeKeys("ab\x1b[Bc\x1b[D\x1b[5~\x1bOA\x1b[6~")).toEqual([
      { name: "text", text: "ab" },
      { name: "history-next" },
      { name: "text", text: "c" },
      { name: "page-up" },
      { name: "history-prev" },
      { name: "page-down" },
    ]);
    expect(decodeKeys("\x1b")).toEqual([{ name: "quit" }]);
  });
});
