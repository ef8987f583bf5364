/** The example loops shipped in loops/ (the default HEALTH_LOOPS_DIR) run as documented. */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { loadLoops } from "../core/loop/registry.ts";
import { ORG, TRIGGER, testEngine, waitForStatus } from "./support/loops.ts";

const EXAMPLES_DIR = join(import.meta.dir, "..", "loops");

test("intake routes forms to staff queues, rejects incomplete ones, and notifies with retries configured", async () => {
  const { loops } = await loadLoops(EXAMPLES_DIR);
  await using t = await testEngine({ loops });
  await t.engine.start();
  const enqueue = async (input: unknown) =>
    (await t.engine.enqueue({ orgId: ORG, loopId: "loop_intake", input, trigger: TRIGGER })).runId;
  const contact = { name: "A. Person", email: "a@example.org" };
  const billing = await enqueue({ form: "Billing-Question", source: "web", fields: contact });
  const records = await enqueue({ form: "records-request", fields: { name: "B. Person", phone: "555-0100" } });
  const unknown = await enqueue({ form: "parking-permit", fields: contact });
  const incomplete = await enqueue({ form: "registration", fields: { name: "" } });
  const empty = await enqueue(undefined);

  const billingRun = await waitForStatus(t.engine, billing);
  expect(billingRun.output).toEqual({
    status: "routed",
    form: "billing-question",
    queue: "billing",
    triage: false,
    notification: {
      notificationId: expect.stringMatching(/^ntf_/),
      channel: "staff-queue",
      queue: "billing",
      summary: "New billing-question form from web (2 fields)",
      sentAt: expect.any(String),
    },
  });
  expect(billingRun.steps.map((s) => `${s.key}:${s.status}`)).toEqual([
    "validate form:complete",
    "route to staff queue:complete",
    "notify staff queue:complete",
  ]);
  const outputs = await Promise.all(
    [records, unknown, incomplete, empty].map(async (id) => (await waitForStatus(t.engine, id)).output),
  );
  expect(outputs).toEqual([
    expect.objectContaining({ status: "routed", queue: "records", triage: false }),
    expect.objectContaining({ status: "routed", queue: "front-desk", triage: true }),
    {
      status: "rejected",
      form: "registration",
      problems: ["fields.name is required", "fields.email or fields.phone is required to reply"],
    },
    { status: "rejected", form: "unknown", problems: ["the body must be a JSON object"] },
  ]);
});

test("reminder sleeps durably, then delivers", async () => {
  const { loops } = await loadLoops(EXAMPLES_DIR);
  await using t = await testEngine({ loops });
  await t.engine.start();
  const { runId } = await t.engine.enqueue({
    orgId: ORG,
    loopId: "loop_reminder",
    input: { subject: "Call back about the records request", after: "200 ms" },
    trigger: TRIGGER,
  });
  await waitForStatus(t.engine, runId, ["sleeping"]);
  const run = await waitForStatus(t.engine, runId);
  expect({
    status: run.status,
    attempts: run.attempts,
    steps: run.steps.map((s) => `${s.key}:${s.kind}:${s.status}`),
    subject: (run.output as { reminder: { subject: string } }).reminder.subject,
  }).toEqual({
    status: "complete",
    attempts: 2,
    steps: ["schedule reminder:do:complete", "wait until due:sleep:complete", "deliver reminder:do:complete"],
    subject: "Call back about the records request",
  });
});
