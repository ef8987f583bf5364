import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { classify } from "../core/classify.ts";
import { checkCommand, sanitizePlan } from "../core/gate.ts";
import { intents } from "../core/intents.ts";
import { blockedPlan, CLINICAL_REDIRECT_MESSAGE, planLocally } from "../core/planner.ts";
import type { DraftPlan } from "../schema/wire.ts";

function commandsOf(plan: DraftPlan): string[] {
  return plan.tool_plan.map((step) => step.command);
}

function lines(text: string): number {
  return text.split("\n").length;
}

describe("planLocally: real prompts", () => {
  test("an SMS intake agent gets the full plan", () => {
    const prompt = "build an intake agent for our clinic's SMS line";
    const plan = planLocally({ prompt, intent: classify(prompt), manifest: null });
    expect(commandsOf(plan)).toEqual([
      "health init intake-agent --channel sms",
      'health route --task intake --prompt "Handle intake requests on the SMS channel and hand off to staff when unsure." --save --name intake-sms',
      "health tools list",
      "health agent build",
      "health verify",
    ]);
    expect(plan.tool_plan.map((step) => [step.kind, step.requires_auth])).toEqual([
      ["scaffold", false],
      ["route", false],
      ["tools", false],
      ["build", false],
      ["verify", false],
    ]);
    expect(lines(plan.assistant_message)).toBeLessThanOrEqual(6);
  });

  test("a workspace with a name is not scaffolded again, and keeps its channel", () => {
    const prompt = "build an intake agent for the web portal";
    const plan = planLocally({ prompt, intent: "build_agent", manifest: { name: "Clinic Intake", channel: "voice" } });
    expect(commandsOf(plan)[0]).toBe(
      'health route --task intake --prompt "Handle intake requests on the voice channel and hand off to staff when unsure." --save --name intake-voice',
    );
    expect(plan.tool_plan.map((step) => step.kind)).toEqual(["route", "tools", "build", "verify"]);
    expect(plan.assistant_message).toContain("`clinic-intake`");
  });

  test("a manifest channel that is not a channel is ignored", () => {
    const plan = planLocally({
      prompt: "build a fax intake agent",
      intent: "build_agent",
      manifest: { channel: "pager; rm -rf /" },
    });
    expect(commandsOf(plan)[0]).toBe("health init intake-agent --channel fax");
  });

  test("routing hands off to whoever the prompt names", () => {
    const prompt = "route intake forms to front-desk staff";
    const plan = planLocally({ prompt, intent: classify(prompt), manifest: null });
    expect(commandsOf(plan)).toEqual([
      'health route --task intake --prompt "Handle intake requests on the web channel and hand off to front desk staff when unsure." --save --name intake-web',
      "health verify",
    ]);
  });

  test("eval design for a routing loop", () => {
    const prompt = "set up eval design for our triage-routing loop";
    const plan = planLocally({ prompt, intent: classify(prompt), manifest: { name: "triage" } });
    expect(commandsOf(plan)[0]).toContain("--task triage-routing");
    expect(plan.assistant_message).toContain("eval design");
  });

  test("each builder intent gets a fitting, shorter plan", () => {
    const kinds = (prompt: string) =>
      planLocally({ prompt, intent: classify(prompt), manifest: { name: "intake" } }).tool_plan.map((s) => s.kind);
    expect({
      deploy: kinds("deploy my loop"),
      tools: kinds("list tools"),
      verify: kinds("verify my workspace"),
      login: kinds("log in"),
      explain: kinds("what is a loop"),
    }).toEqual({
      deploy: ["build", "verify"],
      tools: ["tools"],
      verify: ["verify"],
      login: ["auth"],
      explain: [],
    });
  });

  test("words that name no task fall back to a general agent", () => {
    const plan = planLocally({ prompt: "build a new agent for our team", intent: "build_agent", manifest: null });
    expect(commandsOf(plan)[0]).toBe("health init general-agent --channel web");
  });

  test("placeholders do not pick the channel: [FAX] is not the fax channel", () => {
    const plan = planLocally({
      prompt: "build an intake agent, fax [FAX] is not ours",
      intent: "build_agent",
      manifest: null,
    });
    expect(commandsOf(plan)[0]).toBe("health init intake-agent --channel fax");
    const placeholderOnly = planLocally({
      prompt: "build an intake agent for [FAX]",
      intent: "build_agent",
      manifest: null,
    });
    expect(commandsOf(placeholderOnly)[0]).toBe("health init intake-agent --channel web");
  });
});

describe("the clinical boundary", () => {
  test("blockedPlan is the redirect and no steps", () => {
    expect(blockedPlan()).toEqual({ assistant_message: CLINICAL_REDIRECT_MESSAGE, tool_plan: [] });
    expect(planLocally({ prompt: "what dose of ibuprofen", intent: "clinical_blocked", manifest: null })).toEqual(
      blockedPlan(),
    );
  });

  test("the redirect is short, says what health is, and suggests builder tasks", () => {
    expect(lines(CLINICAL_REDIRECT_MESSAGE)).toBeLessThanOrEqual(6);
    expect(CLINICAL_REDIRECT_MESSAGE).toContain("developer infrastructure");
    for (const task of ["data sourcing", "eval design", "deployment"])
      expect(CLINICAL_REDIRECT_MESSAGE).toContain(task);
    expect(sanitizePlan(blockedPlan()).assistant_message).toBe(CLINICAL_REDIRECT_MESSAGE);
  });

  test("the example tasks it suggests are builder prompts, not clinical ones", () => {
    const examples = [...CLINICAL_REDIRECT_MESSAGE.matchAll(/"([^"]+)"/g)].map((m) => m[1] ?? "");
    expect(examples.length).toBe(3);
    for (const example of examples) expect(classify(example)).not.toBe("clinical_blocked");
  });
});

describe("planLocally: properties", () => {
  const prompt = fc.oneof(
    fc.string({ unit: "binary", maxLength: 300 }),
    fc
      .array(
        fc.constantFrom(
          "build",
          "an",
          "intake",
          "agent",
          "for",
          "SMS",
          "fax",
          "email",
          "voice",
          "route",
          "to",
          "front-desk",
          "staff",
          "loop",
          "'",
          '"',
          ";",
          "$(rm -rf ~)",
          "`id`",
          "|",
          "\n",
          "[NAME]",
          "triage-routing",
          "Ω",
          "ﬁ",
        ),
        { maxLength: 30 },
      )
      .map((w) => w.join(" ")),
  );
  const manifest = fc.oneof(
    fc.constant(null),
    fc.record(
      {
        name: fc.oneof(fc.string({ unit: "binary" }), fc.anything()),
        channel: fc.oneof(fc.constantFrom("sms", "email", "fax", "web", "voice"), fc.string(), fc.anything()),
      },
      { requiredKeys: [] },
    ),
    fc.dictionary(fc.string(), fc.anything()),
  );

  test("every command passes the gate, for any prompt, intent and manifest", () => {
    fc.assert(
      fc.property(prompt, fc.constantFrom(...intents), manifest, (text, intent, workspace) => {
        const plan = planLocally({ prompt: text, intent, manifest: workspace as Record<string, unknown> | null });
        for (const step of plan.tool_plan) expect(checkCommand(step.command)).toMatchObject({ ok: true });
        expect(sanitizePlan(plan).blockedSteps).toBe(0);
      }),
      { numRuns: 500 },
    );
  });

  test("commands hold only slugs and the generated sentence, never prompt text", () => {
    fc.assert(
      fc.property(prompt, fc.constantFrom(...intents), manifest, (text, intent, workspace) => {
        const plan = planLocally({ prompt: text, intent, manifest: workspace as Record<string, unknown> | null });
        for (const { command } of plan.tool_plan) {
          const [outside = "", quoted = "", rest = ""] = command.split('"');
          expect(`${outside}${rest}`).toMatch(/^health [a-z0-9 -]+$/);
          expect(quoted).toMatch(/^[A-Za-z0-9 .-]*$/);
        }
      }),
      { numRuns: 300 },
    );
  });

  test("the message is at most 6 lines and survives the sanitizer unchanged", () => {
    fc.assert(
      fc.property(prompt, fc.constantFrom(...intents), manifest, (text, intent, workspace) => {
        const plan = planLocally({ prompt: text, intent, manifest: workspace as Record<string, unknown> | null });
        expect(lines(plan.assistant_message)).toBeLessThanOrEqual(6);
        expect(sanitizePlan(plan).assistant_message).toBe(plan.assistant_message);
      }),
      { numRuns: 300 },
    );
  });
});
