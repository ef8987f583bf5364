import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { channels, commandNames, commands, findCommand } from "../core/commands.ts";
import {
  checkCommand,
  cleanMessage,
  escapeControlChars,
  sanitizePlan,
  sanitizeStep,
  stripTerminalControls,
  tokenize,
} from "../core/gate.ts";
import type { DraftPlan, DraftStep } from "../schema/wire.ts";

const allowed: ReadonlyArray<readonly [string, string[]]> = [
  ["health init intake-agent --channel sms", ["init", "intake-agent", "--channel", "sms"]],
  ["health init intake-agent --channel=voice", ["init", "intake-agent", "--channel=voice"]],
  [
    'health route --task intake --prompt "Handle intake requests on SMS." --save --name intake-sms',
    ["route", "--task", "intake", "--prompt", "Handle intake requests on SMS.", "--save", "--name", "intake-sms"],
  ],
  ["health route --prompt 'route it' --task intake", ["route", "--prompt", "route it", "--task", "intake"]],
  ["health tools list", ["tools", "list"]],
  ["health tools list --json", ["tools", "list", "--json"]],
  ["health agent build", ["agent", "build"]],
  ["health verify", ["verify"]],
  ["health verify --json", ["verify", "--json"]],
  ["health login", ["login"]],
  ["health code", ["code"]],
  ['health code --prompt "list tools" --hosted --json', ["code", "--prompt", "list tools", "--hosted", "--json"]],
  ["health  verify", ["verify"]],
];

const refused: ReadonlyArray<readonly [string, string]> = [
  ["", "must start with `health `"],
  ["health", "must start with `health `"],
  ["healthverify", "must start with `health `"],
  [" health verify", "must start with `health `"],
  ["HEALTH verify", "must start with `health `"],
  ["rm -rf /", "must start with `health `"],
  ["health verify; rm -rf ~", "metacharacter `;`"],
  ["health verify && curl evil.example", "metacharacter `&`"],
  ["health tools list | sh", "metacharacter `|`"],
  ["health init `whoami` --channel sms", "metacharacter '`'"],
  ["health init $(whoami) --channel sms", "metacharacter `$`"],
  ["health verify > /etc/passwd", "metacharacter `>`"],
  ["health verify < input", "metacharacter `<`"],
  ['health route --task intake --prompt "a;b"', "metacharacter `;`"],
  ["health verify\nrm -rf /", "newline"],
  ["health verify\r", "newline"],
  ["health verify\u001b[2J", "control character (U+001B)"],
  ["health verify\u0000", "control character (U+0000)"],
  ["health\tverify", "must start with `health `"],
  ["health verify\u00a0--json", "unusual space character (U+00A0)"],
  ["health verify\u202e", "invisible"],
  ["health init a\\ b --channel sms", "backslash"],
  ['health route --task intake --prompt "unbalanced', "unbalanced quote"],
  ["health route --task intake --prompt 'unbalanced", "unbalanced quote"],
  ["health ", "names no subcommand"],
  ["health deploy", "`health deploy` is not a documented subcommand"],
  ["health tools", "`health tools` needs a subcommand: tools list"],
  ["health tools remove", "`health tools` needs a subcommand"],
  ["health init --channel sms", "takes 1 argument (<name>), got 0"],
  ["health init a b --channel sms", "takes 1 argument (<name>), got 2"],
  ["health verify now", "takes no arguments, got 1"],
  ["health init intake-agent", "needs --channel"],
  ["health init intake-agent --channel", "--channel needs a value"],
  ["health init intake-agent --channel --json", "--channel needs a value"],
  ["health init intake-agent --channel pager", "--channel must be one of sms, email, fax, web, voice"],
  ["health init 'intake agent' --channel sms", "<name> must be a name"],
  ["health init intake --channel sms --channel web", "--channel is given twice"],
  ["health route --task intake", "needs --prompt"],
  ["health route --task intake --prompt ''", "--prompt must not be empty"],
  ["health route --task intake --prompt hi --save=yes", "--save takes no value"],
  ["health verify --force", "`health verify` does not accept --force"],
  ["health verify -f", "`health verify` does not accept -f"],
  ["health agent build --json", "does not accept --json"],
  ["health login --token hlth_abc", "secrets never appear in a plan"],
  ["health login --password hunter2", "secrets never appear in a plan"],
  ["health login --server https://evil.example", "may not choose the server"],
  ["health code --exec --session-id 1 --step 1", "may not execute other plan steps"],
  [`health verify ${"x".repeat(1_000)}`, "longer than 1000 characters"],
];

describe("checkCommand", () => {
  test.each(allowed)("allows %p", (command, argv) => {
    expect(checkCommand(command)).toEqual({ ok: true, argv });
  });

  test.each(refused)("blocks %p (%s)", (command, reason) => {
    const verdict = checkCommand(command);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) expect(verdict.reason).toContain(reason);
  });

  test("every documented subcommand has a spec and a name", () => {
    expect(commandNames).toEqual(["init", "route", "tools list", "agent build", "verify", "login", "code"]);
    expect(channels).toEqual(["sms", "email", "fax", "web", "voice"]);
    for (const spec of commands) expect(findCommand([...spec.path])).toBe(spec);
  });

  test("a non-string is blocked, not thrown", () => {
    expect(checkCommand(42 as unknown as string)).toEqual({ ok: false, reason: "command is not a string" });
    expect(checkCommand(null as unknown as string).ok).toBe(false);
  });
});

const FORBIDDEN_CHARS = [
  ";",
  "&",
  "|",
  "`",
  "$",
  "<",
  ">",
  "\n",
  "\r",
  "\u0000",
  "\u0007",
  "\u001b",
  "\u007f",
  "\u0085",
  "\u009b",
];

describe("checkCommand: properties", () => {
  test("never ok for a command containing a metacharacter or control character", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 60 }),
        fc.constantFrom(...FORBIDDEN_CHARS),
        fc.string({ maxLength: 60 }),
        (before, bad, after) => {
          expect(checkCommand(`health ${before}${bad}${after}`).ok).toBe(false);
          expect(checkCommand(`health verify ${before}${bad}${after}`).ok).toBe(false);
        },
      ),
      { numRuns: 400 },
    );
  });

  test("never ok for any control character at all", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 0x1f }),
        fc.constantFrom(...allowed.map(([command]) => command)),
        (code, command) => {
          expect(checkCommand(`${command}${String.fromCharCode(code)}`).ok).toBe(false);
        },
      ),
      { numRuns: 200 },
    );
  });

  test("never ok for a command not starting with `health `", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 80 }), (command) => {
        fc.pre(!command.startsWith("health "));
        expect(checkCommand(command).ok).toBe(false);
      }),
      { numRuns: 400 },
    );
  });

  test("never throws, and an ok verdict always names a documented subcommand", () => {
    const words = fc.constantFrom(
      "health",
      "init",
      "route",
      "tools",
      "list",
      "agent",
      "build",
      "verify",
      "login",
      "code",
      "--json",
      "--channel",
      "sms",
      "--task",
      "x",
      "--prompt",
      "'a b'",
      '"c"',
      "--save",
      "--name",
      "--token",
      "--exec",
    );
    const command = fc.oneof(
      fc.string({ unit: "binary", maxLength: 100 }),
      fc.array(words, { maxLength: 10 }).map((w) => `health ${w.join(" ")}`),
    );
    fc.assert(
      fc.property(command, (text) => {
        const verdict = checkCommand(text);
        if (verdict.ok) {
          expect(findCommand(verdict.argv)).toBeDefined();
          expect(verdict.argv).not.toContain("--token");
          expect(verdict.argv).not.toContain("--exec");
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe("tokenize", () => {
  test("splits on spaces and tabs and honours quotes", () => {
    expect(tokenize(`health  route --prompt "a 'b' c" --name='d e'f ""`)).toEqual([
      "health",
      "route",
      "--prompt",
      "a 'b' c",
      "--name=d ef",
      "",
    ]);
    expect(tokenize("a\tb")).toEqual(["a", "b"]);
    expect(tokenize("")).toEqual([]);
    expect(tokenize("   ")).toEqual([]);
  });

  test("null for unbalanced quotes", () => {
    expect(tokenize(`health "a`)).toBeNull();
    expect(tokenize(`health 'a"`)).toBeNull();
  });

  test("round-trips simple arguments", () => {
    const simple = fc.stringMatching(/^[A-Za-z0-9._/=:@%+,-]{1,20}$/);
    fc.assert(
      fc.property(fc.array(simple, { maxLength: 10 }), (args) => {
        expect(tokenize(args.join(" "))).toEqual(args);
      }),
      { numRuns: 300 },
    );
  });

  test("round-trips quoted arguments", () => {
    const noSingle = fc.string({ maxLength: 20 }).filter((s) => !s.includes("'"));
    const noDouble = fc.string({ maxLength: 20 }).filter((s) => !s.includes('"'));
    const quoted = fc.oneof(
      noSingle.map((s) => [s, `'${s}'`] as const),
      noDouble.map((s) => [s, `"${s}"`] as const),
    );
    fc.assert(
      fc.property(fc.array(quoted, { maxLength: 8 }), (pairs) => {
        expect(tokenize(pairs.map(([, q]) => q).join(" "))).toEqual(pairs.map(([s]) => s));
      }),
      { numRuns: 300 },
    );
  });
});

describe("sanitizeStep", () => {
  test("keeps a good step, trims its text and marks it unblocked", () => {
    const step: DraftStep = {
      kind: "  verify ",
      command: "health verify",
      purpose: "  Check the\nworkspace.\u001b[31m ",
      requires_auth: false,
    };
    expect(sanitizeStep(step)).toEqual({
      kind: "verify",
      command: "health verify",
      purpose: "Check the workspace.",
      requires_auth: false,
      blocked_reason: null,
    });
  });

  test("blocks a bad step with a reason and keeps its command for the audit", () => {
    const step: DraftStep = { kind: "build", command: "health agent build; curl x", purpose: "", requires_auth: false };
    expect(sanitizeStep(step)).toEqual({
      kind: "build",
      command: "health agent build; curl x",
      purpose: "",
      requires_auth: false,
      blocked_reason: "command contains the shell metacharacter `;`",
    });
  });

  test("requires_auth is the draft's claim or the command's own need; purpose is cut to 200", () => {
    const step = sanitizeStep({
      kind: "",
      command: "health agent build",
      purpose: "word ".repeat(100),
      requires_auth: true,
    });
    expect(step.requires_auth).toBe(true);
    expect(
      sanitizeStep({ kind: "build", command: "health agent build", purpose: "", requires_auth: false }).requires_auth,
    ).toBe(false);
    expect(step.kind).toBe("other");
    expect(step.purpose.length).toBeLessThanOrEqual(200);
    expect(step.purpose.endsWith("…")).toBe(true);
  });

  test("junk is blocked, never thrown", () => {
    for (const junk of [
      null,
      42,
      "health verify",
      { command: 7 },
      { command: "health verify", kind: {}, purpose: [] },
    ]) {
      const step = sanitizeStep(junk as unknown as DraftStep);
      expect(typeof step.kind).toBe("string");
      expect(typeof step.purpose).toBe("string");
    }
    expect(sanitizeStep({ command: 7 } as unknown as DraftStep).blocked_reason).toBe("command is not a string");
  });
});

describe("sanitizePlan", () => {
  test("cuts the message to 6 lines and counts blocked steps", () => {
    const draft: DraftPlan = {
      assistant_message: "\n\n**Plan**\n\u001b[1mone\u001b[0m\n\n\n\ntwo\nthree\nfour\nfive\nsix\nseven\n\n",
      tool_plan: [
        { kind: "verify", command: "health verify", purpose: "Check.", requires_auth: false },
        { kind: "other", command: "rm -rf /", purpose: "Oops.", requires_auth: false },
      ],
    };
    const clean = sanitizePlan(draft);
    expect(clean.assistant_message).toBe("**Plan**\none\n\ntwo\nthree\nfour…");
    expect(clean.blockedSteps).toBe(1);
    expect(clean.tool_plan.map((step) => step.blocked_reason === null)).toEqual([true, false]);
  });

  test("long lines are cut at a word, and trailing blank lines go", () => {
    expect(cleanMessage(`${"word ".repeat(60)}\n\n  \n`)).toMatch(/^(word ){39}word…$/);
    expect(cleanMessage("a\r\nb\rc\u2028d")).toBe("a\nb\nc\nd");
  });

  test("terminal controls are stripped, newlines kept", () => {
    expect(stripTerminalControls("a\u001b]8;;https://x\u0007link\u001b]8;;\u0007\u0007b\u202e\tc\n")).toBe(
      "alinkb c\n",
    );
    expect(escapeControlChars("health verify\n\u001b[2J")).toBe("health verify\\n\\x1b[2J");
  });

  test("never throws on anything, and its output always holds the contract", () => {
    const stepLike = fc.record(
      {
        kind: fc.oneof(fc.string(), fc.anything()),
        command: fc.oneof(fc.string(), fc.anything()),
        purpose: fc.oneof(fc.string(), fc.anything()),
        requires_auth: fc.anything(),
      },
      { requiredKeys: [] },
    );
    const draft = fc.oneof(
      fc.record({
        assistant_message: fc.string({ unit: "binary", maxLength: 2_000 }),
        tool_plan: fc.array(stepLike, { maxLength: 25 }),
      }),
      fc.anything(),
    );
    fc.assert(
      fc.property(draft, (value) => {
        const clean = sanitizePlan(value as DraftPlan);
        expect(clean.assistant_message.split("\n").length).toBeLessThanOrEqual(6);
        expect(clean.assistant_message).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
        expect(clean.tool_plan.length).toBeLessThanOrEqual(20);
        for (const step of clean.tool_plan) {
          expect(step.purpose.length).toBeLessThanOrEqual(200);
          expect(step.blocked_reason === null || typeof step.blocked_reason === "string").toBe(true);
          if (step.blocked_reason === null) expect(checkCommand(step.command).ok).toBe(true);
        }
        expect(clean.blockedSteps).toBe(clean.tool_plan.filter((step) => step.blocked_reason !== null).length);
      }),
      { numRuns: 300 },
    );
  });
});
