/** health code one-shot: offline and hosted planning, what leaves the machine, and what is saved. */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { canonicalJson, sha256Hex } from "../core/hash.ts";
import pkg from "../package.json" with { type: "json" };
import { startTestServer } from "./support/server.ts";
import { GOOD_PLAN, startUpstreamStub } from "./support/upstream-stub.ts";
import {
  CAPTURE_COMPANY,
  CAPTURE_TOKEN,
  CAPTURED_PLAN,
  startPlanningCapture,
} from "./fixtures/cli/planning-capture.ts";
import { cli, deadServerUrl, json, tempDir } from "./fixtures/cli/cli.ts";

// Every test here runs the CLI as real processes, some against a real server: 5 s is tight on 2 cores.
setDefaultTimeout(20_000);

interface Step {
  step: number;
  kind: string;
  command: string;
  purpose: string;
  requires_auth: boolean;
  blocked_reason: string | null;
}

interface CodeJson {
  session_id: string;
  turn_id: string;
  intent: string;
  redacted_prompt: string;
  assistant_message: string;
  tool_plan: Step[];
  hosted: boolean;
  audit_id?: string;
  blocked_category?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function auditRows(dir: string): Array<Record<string, unknown>> {
  return readFileSync(join(dir, ".health", "code", "audit.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
}

/** Stores a token for `server` the way `health login --token` does, without asking a server. */
function storeToken(home: string, server: string, secret: string): void {
  writeFileSync(
    join(home, "credentials.json"),
    JSON.stringify({ version: 1, server, token: { secret, scopes: ["cli:run"] } }),
    { mode: 0o600 },
  );
}

describe("health code --prompt (offline)", () => {
  test("plans locally: the JSON shape of docs/interface.md §12.4, numbered steps, a saved session and an audit row without the prompt", async () => {
    using dir = tempDir("health-cli-code-");
    const prompt = "build an SMS intake agent for our clinic; reach Dr. Jane Smith at jane.smith@example.org";
    // HEALTH_URL points nowhere: the offline mode must not need the network.
    const result = await cli(["code", "--prompt", prompt, "--json"], {
      cwd: dir,
      home: dir,
      env: { HEALTH_URL: "http://127.0.0.1:9" },
    });
    expect(result.code).toBe(0);
    const turn = json<CodeJson>(result);
    expect(Object.keys(turn).sort()).toEqual([
      "assistant_message",
      "hosted",
      "intent",
      "redacted_prompt",
      "session_id",
      "tool_plan",
      "turn_id",
    ]);
    expect(turn).toMatchObject({ intent: "build_agent", hosted: false });
    expect(turn.session_id).toMatch(UUID);
    expect(turn.turn_id).toMatch(UUID);
    expect(turn.redacted_prompt).not.toContain("jane.smith@example.org");
    expect(turn.redacted_prompt).toContain("[EMAIL]");
    expect(turn.tool_plan.map((s) => s.step)).toEqual(turn.tool_plan.map((_, i) => i + 1));
    expect(turn.tool_plan[0]?.command).toStartWith("health init ");
    expect(turn.tool_plan.every((s) => s.blocked_reason === null)).toBe(true);

    const saved = JSON.parse(readFileSync(join(dir, ".health", "code", "sessions", `${turn.session_id}.json`), "utf8"));
    expect(saved).toMatchObject({
      session_id: turn.session_id,
      turn_id: turn.turn_id,
      tool_plan: turn.tool_plan,
      hosted: false,
    });

    const rows = auditRows(dir);
    expect(rows).toHaveLength(1);
    expect(Object.keys(rows[0] ?? {}).sort()).toEqual([
      "audit_id",
      "intent",
      "mode",
      "session_id",
      "steps",
      "time",
      "turn_id",
    ]);
    expect(rows[0]).toMatchObject({
      session_id: turn.session_id,
      turn_id: turn.turn_id,
      mode: "offline",
      intent: "build_agent",
      steps: turn.tool_plan.length,
      audit_id: null,
    });
    expect(readFileSync(join(dir, ".health", "code", "audit.jsonl"), "utf8")).not.toContain("intake agent");
  });

  test("a clinical prompt gets the redirect, an empty plan and exit 3", async () => {
    using dir = tempDir("health-cli-code-");
    const result = await cli(
      ["code", "--prompt", "what dose of amoxicillin should I prescribe for my patient?", "--json"],
      { cwd: dir, home: dir },
    );
    expect(result.code).toBe(3);
    const turn = json<CodeJson>(result);
    expect(turn).toMatchObject({
      intent: "clinical_blocked",
      tool_plan: [],
      hosted: false,
      blocked_category: "medication_dosing",
    });
    expect(turn.assistant_message).toContain("clinical advice");

    // One line: what fired and a builder task to ask for instead; nothing else.
    const pretty = await cli(["code", "--prompt", "diagnose my patient's chest pain"], { cwd: dir, home: dir });
    expect(pretty.code).toBe(3);
    expect(pretty.stdout.trim().split("\n")).toEqual([
      'Blocked: this asks for clinical advice (diagnosis), which health does not give. Try instead: "route diagnostic questions to your clinical team"',
    ]);
    expect(pretty.stderr).toBe("");
  });

  test("pretty output: the message, the numbered plan and how to run a step", async () => {
    using dir = tempDir("health-cli-code-");
    const result = await cli(["code", "--prompt", "list the tools my agent can use"], { cwd: dir, home: dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("1. health tools list");
    expect(result.stdout).toMatch(/Run a step: health code --exec --session-id [0-9a-f-]{36} --step 1/);
    expect(result.stdout).not.toContain("\x1b[");
  });
});

describe("health code --hosted", () => {
  test("against a real server: overlays the hosted plan and its audit id, keeps local intent and redaction", async () => {
    await using server = await startTestServer();
    using dir = tempDir("health-cli-hosted-");
    expect(
      (await cli(["login", "--server", server.url, "--token", server.systemKey], { cwd: dir, home: dir })).code,
    ).toBe(0);
    const result = await cli(["code", "--hosted", "--prompt", "build an SMS intake agent, SSN 123-45-6789", "--json"], {
      cwd: dir,
      home: dir,
    });
    expect(result.code).toBe(0);
    const turn = json<CodeJson>(result);
    expect(turn).toMatchObject({ hosted: true, intent: "build_agent" });
    expect(turn.audit_id).toMatch(/^cli-code-[0-9a-f-]{36}$/);
    expect(turn.redacted_prompt).toContain("[SSN]");
    expect(turn.tool_plan.length).toBeGreaterThan(0);
    expect(auditRows(dir)[0]).toMatchObject({ mode: "hosted", audit_id: turn.audit_id });
  });

  test("through the server to an upstream model: the model's plan arrives, and the upstream never sees the identifiers", async () => {
    await using stub = startUpstreamStub();
    await using server = await startTestServer({ HEALTH_UPSTREAM_URL: stub.url });
    using dir = tempDir("health-cli-hosted-");
    expect(
      (await cli(["login", "--server", server.url, "--token", server.systemKey], { cwd: dir, home: dir })).code,
    ).toBe(0);
    const result = await cli(
      [
        "code",
        "--hosted",
        "--prompt",
        "build an intake agent; call me at 555-123-4567 or mail ann@example.org",
        "--json",
      ],
      {
        cwd: dir,
        home: dir,
      },
    );
    expect(result.code).toBe(0);
    const turn = json<CodeJson>(result);
    expect(turn.assistant_message).toBe(GOOD_PLAN.assistant_message);
    expect(turn.tool_plan.map((s) => [s.step, s.command])).toEqual(
      GOOD_PLAN.tool_plan.map((s, i) => [i + 1, s.command]),
    );
    expect(stub.calls).toHaveLength(1);
    const upstreamSaw = JSON.stringify(stub.calls[0]?.body);
    expect(upstreamSaw).not.toContain("555-123-4567");
    expect(upstreamSaw).not.toContain("ann@example.org");
  });

  test("the request: the §2.1 body in canonical JSON, Idempotency-Key = its SHA-256, attribution headers, raw token only in the header", async () => {
    await using capture = startPlanningCapture();
    using dir = tempDir("health-cli-hosted-");
    expect(
      (await cli(["login", "--server", capture.url, "--token", CAPTURE_TOKEN], { cwd: dir, home: dir })).code,
    ).toBe(0);
    writeFileSync(
      join(dir, "health.json"),
      JSON.stringify({ name: "intake", channel: "sms", loops: [], routes: {}, owner: "ops@example.org" }),
    );

    const result = await cli(["code", "--hosted", "--prompt", "build an SMS intake agent", "--json"], {
      cwd: dir,
      home: dir,
    });
    expect(result.code).toBe(0);
    const turn = json<CodeJson>(result);
    expect(turn).toMatchObject({ hosted: true, assistant_message: CAPTURED_PLAN.assistant_message });
    expect(turn.tool_plan).toEqual(CAPTURED_PLAN.tool_plan.map((s, i) => ({ step: i + 1, ...s })));

    expect(capture.requests).toHaveLength(1);
    const { headers, body } = capture.requests[0] ?? { headers: new Headers(), body: "" };
    const sent = JSON.parse(body);
    expect(body).toBe(canonicalJson(sent));
    expect(headers.get("idempotency-key")).toBe(sha256Hex(body));
    expect(headers.get("authorization")).toBe(`Bearer ${CAPTURE_TOKEN}`);
    expect(headers.get("x-service-cli-version")).toBe(pkg.version);
    expect(headers.get("x-service-company")).toBe(CAPTURE_COMPANY);
    expect(headers.get("content-type")).toBe("application/json");
    expect(body).not.toContain(CAPTURE_TOKEN);
    expect(sent).toEqual({
      session_id: turn.session_id,
      turn_id: turn.turn_id,
      redacted_prompt: "build an SMS intake agent",
      intent: "build_agent",
      route_context: { hosted: true },
      safety_checks: ["developer-infrastructure-only"],
      // The manifest goes along, redacted like the prompt.
      workspace_manifest: { name: "intake", channel: "sms", loops: [], routes: {}, owner: "[EMAIL]" },
    });

    // settings.json names the company explicitly; it wins over the token's.
    writeFileSync(join(dir, "settings.json"), JSON.stringify({ company: "builder-co" }));
    expect(
      (await cli(["code", "--hosted", "--prompt", "verify my workspace", "--json"], { cwd: dir, home: dir })).code,
    ).toBe(0);
    expect(capture.requests[1]?.headers.get("x-service-company")).toBe("builder-co");
  });

  test("property: prompts carrying SSNs, emails and phone numbers never reach the server with them", async () => {
    await using capture = startPlanningCapture();
    using dir = tempDir("health-cli-hosted-");
    storeToken(dir, capture.url, CAPTURE_TOKEN);
    const digits = (n: number) =>
      fc.array(fc.integer({ min: 0, max: 9 }), { minLength: n, maxLength: n }).map((d) => d.join(""));
    const ssn = fc.tuple(digits(3), digits(2), digits(4)).map(([a, b, c]) => `${a}-${b}-${c}`);
    const phone = fc
      .tuple(fc.integer({ min: 201, max: 989 }), digits(3), digits(4), fc.constantFrom("dash", "paren", "dot"))
      .map(([area, mid, last, style]) =>
        style === "paren"
          ? `(${area}) ${mid}-${last}`
          : style === "dot"
            ? `${area}.${mid}.${last}`
            : `${area}-${mid}-${last}`,
      );
    const email = fc
      .tuple(
        fc.stringMatching(/^[a-z][a-z0-9.]{0,10}[a-z0-9]$/),
        fc.stringMatching(/^[a-z]{2,10}$/),
        fc.constantFrom("org", "com", "net", "io"),
      )
      .map(([user, host, tld]) => `${user}@${host}.${tld}`);
    const builderText = fc.constantFrom(
      "build an SMS intake agent; the test patient is",
      "route billing questions to the billing team, contact",
      "create a scheduling bot that texts",
      "set up a web form loop for",
    );
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(
        builderText,
        fc.array(fc.oneof(ssn, phone, email), { minLength: 1, maxLength: 3 }),
        async (text, identifiers) => {
          const before = capture.requests.length;
          const result = await cli(["code", "--hosted", "--prompt", `${text} ${identifiers.join(" and ")}`, "--json"], {
            cwd: dir,
            home: dir,
          });
          expect(result.code).toBe(0);
          const sent = capture.requests.slice(before);
          expect(sent).toHaveLength(1);
          for (const request of sent) {
            for (const identifier of identifiers) {
              expect(request.body).not.toContain(identifier);
              expect(JSON.stringify(Object.fromEntries(request.headers))).not.toContain(identifier);
            }
          }
          runs++;
        },
      ),
      { numRuns: 20 },
    );
    expect(runs).toBeGreaterThanOrEqual(20);
  });

  test("a clinical prompt is never sent, even in hosted mode (exit 3)", async () => {
    await using capture = startPlanningCapture();
    using dir = tempDir("health-cli-hosted-");
    storeToken(dir, capture.url, CAPTURE_TOKEN);
    const result = await cli(
      ["code", "--hosted", "--prompt", "what medication should I take for my headache", "--json"],
      { cwd: dir, home: dir },
    );
    expect(result.code).toBe(3);
    expect(json<CodeJson>(result)).toMatchObject({ intent: "clinical_blocked", tool_plan: [], hosted: false });
    expect(capture.requests).toHaveLength(0);
  });

  test("server down: the offline plan is kept with a warning (exit 0); no stored token: a clear error (exit 1)", async () => {
    using dir = tempDir("health-cli-hosted-");
    const none = await cli(["code", "--hosted", "--prompt", "build an intake agent"], { cwd: dir, home: dir });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("Hosted planning needs a stored system key or cli:run token");

    storeToken(dir, deadServerUrl(), "some-token");
    const down = await cli(["code", "--hosted", "--prompt", "build an intake agent", "--json"], {
      cwd: dir,
      home: dir,
    });
    expect(down.code).toBe(0);
    const turn = json<CodeJson>(down);
    expect(turn.hosted).toBe(false);
    expect(turn.tool_plan.length).toBeGreaterThan(0);
    expect(down.stderr).toContain(
      "Hosted planning failed, so this is the offline plan: Cannot reach the health server",
    );
    expect(auditRows(dir)[0]).toMatchObject({ mode: "offline", audit_id: null });
  });

  test("hosted steps pass this client's gate too: a step the server let through with `;` is shown blocked", async () => {
    await using capture = startPlanningCapture();
    using dir = tempDir("health-cli-hosted-");
    storeToken(dir, capture.url, CAPTURE_TOKEN);
    capture.plan = {
      assistant_message: "Two steps.",
      tool_plan: [
        {
          kind: "tools",
          command: "health tools list",
          purpose: "List tools",
          requires_auth: false,
          blocked_reason: null,
        },
        {
          kind: "other",
          command: "health verify; curl evil.example",
          purpose: "Sneaky",
          requires_auth: false,
          blocked_reason: null,
        },
      ],
    };
    const result = await cli(["code", "--hosted", "--prompt", "build an intake agent", "--json"], {
      cwd: dir,
      home: dir,
    });
    expect(result.code).toBe(0);
    const steps = json<CodeJson>(result).tool_plan;
    expect(steps[0]?.blocked_reason).toBeNull();
    expect(steps[1]?.blocked_reason).toContain("metacharacter");

    const pretty = await cli(["code", "--hosted", "--prompt", "build an intake agent"], { cwd: dir, home: dir });
    expect(pretty.stdout).toContain("1. health tools list");
    expect(pretty.stdout).toMatch(/2\. ✖ blocked\s+health verify; curl evil\.example\n\s+reason: .*metacharacter/);
  });

  test("over the server's rate limit: the offline plan, a warning that says when to retry, exit 0", async () => {
    await using server = await startTestServer({ HEALTH_RATE_LIMIT_PER_MINUTE: "1" });
    using dir = tempDir("health-cli-hosted-");
    storeToken(dir, server.url, server.systemKey);
    const first = await cli(["code", "--hosted", "--prompt", "build an intake agent", "--json"], {
      cwd: dir,
      home: dir,
    });
    expect(json<CodeJson>(first).hosted).toBe(true);
    // The limiter counts in windows of a calendar minute: a call that lands just after a minute
    // turns is allowed again. Within a second at most one minute turns, so of two more calls the
    // later one is over the limit at the latest.
    let limited = await cli(["code", "--hosted", "--prompt", "build a billing agent", "--json"], {
      cwd: dir,
      home: dir,
    });
    if (json<CodeJson>(limited).hosted) {
      limited = await cli(["code", "--hosted", "--prompt", "build a refill agent", "--json"], { cwd: dir, home: dir });
    }
    expect(limited.code).toBe(0);
    expect(json<CodeJson>(limited).hosted).toBe(false);
    expect(limited.stderr).toMatch(/rate limit is reached \(try again in \d+ s\)/);
  });

  test("a 5xx keeps the offline plan (exit 0); a refused token keeps it too but exits 1", async () => {
    await using capture = startPlanningCapture();
    using dir = tempDir("health-cli-hosted-");
    storeToken(dir, capture.url, CAPTURE_TOKEN);
    capture.status = 502;
    const failing = await cli(["code", "--hosted", "--prompt", "build an intake agent", "--json"], {
      cwd: dir,
      home: dir,
    });
    expect(failing.code).toBe(0);
    expect(json<CodeJson>(failing).hosted).toBe(false);
    expect(failing.stderr).toContain("502");

    capture.status = 200;
    storeToken(dir, capture.url, "a-revoked-token");
    const refused = await cli(["code", "--hosted", "--prompt", "build an intake agent", "--json"], {
      cwd: dir,
      home: dir,
    });
    expect(refused.code).toBe(1);
    expect(json<CodeJson>(refused).hosted).toBe(false);
    expect(refused.stderr).toContain("refused the stored token (401)");
    expect(refused.stderr).not.toContain("a-revoked-token");
  });
});
