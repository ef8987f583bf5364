/**
 * The catalogue `health tools list` prints. Durable primitives come from the SDK (`health/loop`);
 * the integrations are the stand-in senders `health init` scaffolds, one per channel: they make
 * no network call until you replace their body with your provider's API (inside a step.do, so a
 * delivery is retried and never repeated after it succeeded).
 */
export interface Tool {
  name: string;
  kind: "durable-step" | "integration";
  signature: string;
  description: string;
  /** Where it comes from. */
  source: string;
}

export const tools: readonly Tool[] = [
  {
    name: "step.do",
    kind: "durable-step",
    signature: "step.do(name, [{ retries, timeout }], fn)",
    description: "Run fn once and persist its JSON result; after a crash completed steps return their stored result.",
    source: "health/loop",
  },
  {
    name: "step.sleep",
    kind: "durable-step",
    signature: 'step.sleep(name, duration)  // 5000 or "30 seconds"',
    description: "Suspend the run for a duration; it survives a restart and holds no timer.",
    source: "health/loop",
  },
  {
    name: "step.sleepUntil",
    kind: "durable-step",
    signature: "step.sleepUntil(name, date)",
    description: "Suspend the run until a Date, epoch milliseconds or a date string.",
    source: "health/loop",
  },
  {
    name: "NonRetryableError",
    kind: "durable-step",
    signature: "throw new NonRetryableError(message)",
    description: "Fail a step at once, skipping its remaining retries.",
    source: "health/loop",
  },
  {
    name: "sendSms",
    kind: "integration",
    signature: "sendSms(to, text)",
    description: "Acknowledge an SMS sender (stand-in; put your SMS provider's call here).",
    source: "health init --channel sms",
  },
  {
    name: "sendEmail",
    kind: "integration",
    signature: "sendEmail(to, text)",
    description: "Reply to an email sender (stand-in; put your email provider's call here).",
    source: "health init --channel email",
  },
  {
    name: "sendFaxReceipt",
    kind: "integration",
    signature: "sendFaxReceipt(to, text)",
    description: "Send a receipt back to a fax sender (stand-in; put your fax provider's call here).",
    source: "health init --channel fax",
  },
  {
    name: "sendConfirmation",
    kind: "integration",
    signature: "sendConfirmation(to, text)",
    description: "Confirm a web form submission (stand-in; put your notification service's call here).",
    source: "health init --channel web",
  },
  {
    name: "scheduleCallback",
    kind: "integration",
    signature: "scheduleCallback(to, text)",
    description: "Book a staff callback for a caller (stand-in; put your telephony provider's call here).",
    source: "health init --channel voice",
  },
];
