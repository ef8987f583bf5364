/**
 * Example loop: routes an intake form to the staff queue that handles it (front desk, billing or
 * records) and notifies that queue. Administrative only: it reads the form type and which fields
 * are present, never interprets their content, and gives no clinical advice.
 *
 * Trigger it with a body like
 *   { "form": "billing-question", "source": "web", "fields": { "name": "A. Person", "email": "a@example.org" } }
 */
import { type HealthEvent, type HealthStep, NonRetryableError, Workflow } from "health/loop";

export interface IntakeBody {
  form?: string;
  source?: string;
  fields?: Record<string, string>;
}

type StaffQueue = "front-desk" | "billing" | "records";

/** Which queue handles which form. Anything else goes to the front desk, which triages by hand. */
const QUEUE_BY_FORM: Record<string, StaffQueue> = {
  registration: "front-desk",
  "appointment-request": "front-desk",
  "contact-update": "front-desk",
  "billing-question": "billing",
  "insurance-card-update": "billing",
  "payment-plan": "billing",
  "records-request": "records",
  "records-release": "records",
};

interface Validation {
  form: string;
  source: string;
  /** Names of the fields received; their values stay in the run input and are not copied around. */
  fieldNames: string[];
  problems: string[];
}

export class IntakeLoop extends Workflow<IntakeBody | undefined> {
  async run(event: HealthEvent<IntakeBody | undefined>, step: HealthStep): Promise<unknown> {
    const checked = await step.do("validate form", () => validateIntake(event.body));
    if (checked.problems.length > 0) {
      return { status: "rejected", form: checked.form, problems: checked.problems };
    }
    const route = await step.do("route to staff queue", () => ({
      queue: QUEUE_BY_FORM[checked.form] ?? "front-desk",
      known: checked.form in QUEUE_BY_FORM,
    }));
    // Delivery to a queue is the flaky part in real deployments (a chat or ticketing API), hence
    // the retries; a permanent refusal is thrown as NonRetryableError so it is not retried.
    const notification = await step.do(
      "notify staff queue",
      { retries: { limit: 3, delay: "1 second", backoff: "exponential" }, timeout: "10 seconds" },
      () => notifyQueue(route.queue, checked),
    );
    return { status: "routed", form: checked.form, queue: route.queue, triage: !route.known, notification };
  }
}

function validateIntake(body: IntakeBody | undefined): Validation {
  const problems: string[] = [];
  if (typeof body !== "object" || body === null) {
    return { form: "unknown", source: "unknown", fieldNames: [], problems: ["the body must be a JSON object"] };
  }
  const form = typeof body.form === "string" && body.form.trim() !== "" ? body.form.trim().toLowerCase() : "unknown";
  if (form === "unknown") problems.push('form is required (for example "registration" or "billing-question")');
  const fields = typeof body.fields === "object" && body.fields !== null ? body.fields : {};
  const fieldNames = Object.keys(fields).sort();
  for (const name of fieldNames) {
    if (typeof fields[name] !== "string") problems.push(`fields.${name} must be a string`);
  }
  if (!hasText(fields.name)) problems.push("fields.name is required");
  if (!hasText(fields.email) && !hasText(fields.phone))
    problems.push("fields.email or fields.phone is required to reply");
  const source = typeof body.source === "string" && body.source !== "" ? body.source : "unspecified";
  return { form, source, fieldNames, problems };
}

function hasText(value: unknown): boolean {
  return typeof value === "string" && value.trim() !== "";
}

/** Stands in for a call to the queue's API: returns the record such a call would produce. */
function notifyQueue(queue: StaffQueue, checked: Validation) {
  if (checked.fieldNames.length > 100) throw new NonRetryableError("too many fields for a queue notification");
  return {
    notificationId: `ntf_${crypto.randomUUID()}`,
    channel: "staff-queue",
    queue,
    summary: `New ${checked.form} form from ${checked.source} (${checked.fieldNames.length} fields)`,
    sentAt: new Date().toISOString(),
  };
}
