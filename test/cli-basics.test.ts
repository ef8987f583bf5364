/** The CLI's surface: help, version, usage errors with suggestions, colour, offline tools. */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import pkg from "../package.json" with { type: "json" };
import { whenTime } from "../cli/lib/output.ts";
import { relativeTime } from "../core/relative-time.ts";
import { cli, json, runCommand, tempDir } from "./fixtures/cli/cli.ts";

// Every test here runs the CLI as real processes, some against a real server: 5 s is tight on 2 cores.
setDefaultTimeout(20_000);

describe("health: help, version and usage errors", () => {
  test("--version prints the package version; --help lists the commands with examples", async () => {
    using dir = tempDir("health-cli-");
    const version = await cli(["--version"], { cwd: dir, home: dir });
    expect(version).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: "" });

    const help = await cli(["--help"], { cwd: dir, home: dir });
    expect(help.code).toBe(0);
    for (const command of [
      "login",
      "logout",
      "setup",
      "whoami",
      "tokens",
      "loops",
      "code",
      "init",
      "route",
      "tools",
      "agent",
      "verify",
    ]) {
      expect(help.stdout).toContain(command);
    }
    expect(help.stdout).toContain("Examples:");
  });

  test("every command has --help that teaches, with examples", async () => {
    using dir = tempDir("health-cli-");
    const commands = [
      ["login"],
      ["setup"],
      ["logout"],
      ["whoami"],
      ["tokens", "create"],
      ["tokens", "list"],
      ["tokens", "revoke"],
      ["loops", "list"],
      ["code"],
      ["init"],
      ["route"],
      ["tools", "list"],
      ["agent", "build"],
      ["verify"],
    ];
    const results = await Promise.all(commands.map((command) => cli([...command, "--help"], { cwd: dir, home: dir })));
    results.forEach((result, i) => {
      expect({ command: commands[i], code: result.code }).toEqual({ command: commands[i], code: 0 });
      expect(result.stdout).toContain(`health ${commands[i]?.join(" ")}`);
      expect(result.stdout).toContain("Examples:");
      expect(result.stdout).toContain("USAGE");
    });
  });

  test("an unknown subcommand is a usage error with a suggestion (exit 2)", async () => {
    using dir = tempDir("health-cli-");
    const result = await cli(["logn"], { cwd: dir, home: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Unknown command "logn"');
    expect(result.stderr).toContain("Did you mean `health login`?");
    // One line pointing at --help, not the whole usage, which would scroll the error away.
    expect(result.stderr).toContain("Run `health --help` for its usage and examples.");
    expect(result.stderr).not.toContain("USAGE");

    const nested = await cli(["tokens", "lst"], { cwd: dir, home: dir });
    expect(nested.code).toBe(2);
    expect(nested.stderr).toContain("Did you mean `health tokens list`?");
  });

  test("an unknown option is a usage error with a suggestion (exit 2)", async () => {
    using dir = tempDir("health-cli-");
    const result = await cli(["code", "--promt", "build an agent"], { cwd: dir, home: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("Unknown option --promt");
    expect(result.stderr).toContain("Did you mean --prompt?");
    expect(result.stderr).toContain("Run `health code --help` for its usage and examples.");
    expect(result.stderr.trim().split("\n")).toHaveLength(3);
  });

  test("missing and invalid arguments say what is wrong and where the usage is (exit 2)", async () => {
    using dir = tempDir("health-cli-");
    const cases = [
      { args: ["init", "intake"], says: "--channel", usage: false },
      { args: ["init", "intake", "--channel", "pigeon"], says: "pigeon", usage: false },
      { args: ["tokens"], says: "needs a subcommand", usage: true },
      { args: ["code", "--prompt"], says: "--prompt needs a value", usage: false },
      { args: ["verify", "extra"], says: 'Unexpected argument "extra"', usage: false },
      { args: [], says: "needs a subcommand", usage: true },
    ];
    for (const { args, says, usage } of cases) {
      const result = await cli(args, { cwd: dir, home: dir });
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr).toContain(says);
      // A missing subcommand shows the list of subcommands; anything else points at --help.
      expect({ args, usage: result.stderr.includes("USAGE") }).toEqual({ args, usage });
      expect({ args, pointer: result.stderr.includes("--help` for its usage") }).toEqual({ args, pointer: !usage });
      expect(result.stderr).not.toContain("    at ");
    }
  });

  test("NO_COLOR wins over FORCE_COLOR; FORCE_COLOR alone colours", async () => {
    using dir = tempDir("health-cli-");
    const plain = await cli(["tools", "list"], { cwd: dir, home: dir, env: { NO_COLOR: "yes", FORCE_COLOR: "1" } });
    expect(plain.code).toBe(0);
    expect(plain.stdout).not.toContain("\x1b[");
    const coloured = await cli(["tools", "list"], { cwd: dir, home: dir, env: { NO_COLOR: "", FORCE_COLOR: "1" } });
    expect(coloured.stdout).toContain("\x1b[1m");
  });
});

describe("health tools list", () => {
  test("lists the durable steps and the built-in integrations, offline", async () => {
    using dir = tempDir("health-cli-");
    const result = await cli(["tools", "list", "--json"], {
      cwd: dir,
      home: dir,
      env: { HEALTH_URL: "http://127.0.0.1:9" },
    });
    expect(result.code).toBe(0);
    const tools = json<Array<{ name: string; kind: string }>>(result);
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(["step.do", "step.sleep", "step.sleepUntil", "sendSms", "scheduleCallback"]),
    );
    const table = await cli(["tools", "list"], { cwd: dir, home: dir });
    expect(table.stdout.split("\n")[0]).toMatch(/^TOOL\s+KIND\s+FROM\s+WHAT IT DOES$/);
  });
});

describe("times as people read them", () => {
  const now = Date.parse("2026-11-21T23:40:00Z");
  test.each([
    ["2026-11-21T23:40:02Z", "just now"],
    ["2026-11-21T23:40:58Z", "in 58 s"],
    ["2026-11-21T23:37:00Z", "3 min ago"],
    ["2026-11-21T21:40:00Z", "2 h ago"],
    ["2026-11-25T23:40:00Z", "in 4 days"],
  ])("%p is %p", (iso, expected) => {
    expect(relativeTime(iso, now)).toBe(expected);
  });

  test("detail views keep the absolute time beside the relative one", () => {
    expect(whenTime("2026-11-21T23:41:00Z", now)).toBe("in 1 min, 2026-11-21 23:41Z");
    expect(whenTime(null, now)).toBe("never");
  });
});

describe("the health launcher (package.json bin, what npm link and npx run)", () => {
  const launcher = join(import.meta.dir, "..", "cli", "health.mjs");
  async function launch(args: string[], env: Record<string, string> = {}) {
    using dir = tempDir("health-launcher-");
    return runCommand(["node", launcher, ...args], { cwd: `${dir}`, home: `${dir}`, env });
  }

  test("runs the CLI with this package's Bun from any folder, passing output and exit codes through", async () => {
    expect(await launch(["--version"])).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: "" });
    const usage = await launch(["tokens", "list", "--bogus"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("Unknown option --bogus");
  });

  test("says how to fix a missing Bun", async () => {
    const result = await launch(["--version"], { HEALTH_BUN: "/nonexistent/bun" });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("health: could not start Bun");
    expect(result.stderr).toContain("HEALTH_BUN");
  });
});
