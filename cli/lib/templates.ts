/**
 * The files `health init` writes. Each channel gets a loop that does administrative work only:
 * it validates what arrived, routes it to a staff queue by keyword and acknowledges it. None of
 * them reads meaning into clinical content or answers a clinical question; the stand-in senders
 * make no network call, so a fresh workspace builds and runs offline.
 */
import type { Channel } from "../../core/commands.ts";

/** `front-desk` → `FrontDesk`; a name starting with a digit gets a letter first. */
export function className(name: string): string {
  const pascal = name
    .split(/[-_]+/)
    .filter((part) => part !== "")
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("");
  return `${/^[0-9]/.test(pascal) ? "L" : ""}${pascal}Loop`;
}

interface ChannelTemplate {
  /** What the trigger body looks like, as TypeScript fields. */
  fields: string;
  /** An example trigger body for the file's comment. */
  example: string;
  /** The fields whose text the router looks at. */
  routedFields: readonly string[];
  /** Which field identifies where the acknowledgement goes. */
  replyTo: string;
  /** The channel's stand-in sender. */
  sender: string;
  senderName: string;
  /** Extra, channel-specific steps after routing (may be empty). */
  extraSteps: string;
}

const templates: Readonly<Record<Channel, ChannelTemplate>> = {
  sms: {
    fields: "  /** The sender's number, as the SMS provider gives it. */\n  from?: string;\n  text?: string;",
    example: '{ "from": "+15555550100", "text": "I need to reschedule my appointment", "source": "sms" }',
    routedFields: ["text"],
    replyTo: "from",
    senderName: "sendSms",
    sender: `/** Stands in for your SMS provider's API; swap in the real call inside the step. */
function sendSms(to: string, text: string) {
  return { messageId: \`sms_\${crypto.randomUUID()}\`, channel: "sms", to: mask(to), characters: text.length, sentAt: new Date().toISOString() };
}`,
    extraSteps: "",
  },
  email: {
    fields: "  from?: string;\n  subject?: string;\n  text?: string;",
    example: '{ "from": "someone@example.org", "subject": "Billing question", "text": "…", "source": "email" }',
    routedFields: ["subject", "text"],
    replyTo: "from",
    senderName: "sendEmail",
    sender: `/** Stands in for your email provider's API; swap in the real call inside the step. */
function sendEmail(to: string, text: string) {
  return { messageId: \`email_\${crypto.randomUUID()}\`, channel: "email", to: mask(to), characters: text.length, sentAt: new Date().toISOString() };
}`,
    extraSteps: "",
  },
  fax: {
    fields:
      '  /** The sending fax number. */\n  from?: string;\n  /** What the cover sheet says the document is, e.g. "referral" or "records request". */\n  documentType?: string;\n  pages?: number;',
    example: '{ "from": "+15555550111", "documentType": "records request", "pages": 3, "source": "fax" }',
    routedFields: ["documentType"],
    replyTo: "from",
    senderName: "sendFaxReceipt",
    sender: `/** Stands in for your fax provider's API: a receipt back to the sender; swap in the real call. */
function sendFaxReceipt(to: string, text: string) {
  return { faxId: \`fax_\${crypto.randomUUID()}\`, channel: "fax", to: mask(to), characters: text.length, sentAt: new Date().toISOString() };
}`,
    extraSteps: "",
  },
  web: {
    fields:
      '  /** The form\'s type, e.g. "appointment-request". */\n  form?: string;\n  /** Where to send the confirmation (an email address). */\n  replyTo?: string;\n  text?: string;',
    example: '{ "form": "appointment-request", "replyTo": "someone@example.org", "text": "…", "source": "web" }',
    routedFields: ["form", "text"],
    replyTo: "replyTo",
    senderName: "sendConfirmation",
    sender: `/** Stands in for your web notification (email or in-app); swap in the real call inside the step. */
function sendConfirmation(to: string, text: string) {
  return { messageId: \`web_\${crypto.randomUUID()}\`, channel: "web", to: mask(to), characters: text.length, sentAt: new Date().toISOString() };
}`,
    extraSteps: "",
  },
  voice: {
    fields:
      "  /** The caller's number. */\n  caller?: string;\n  /** Why they called, as the IVR menu or a transcript summary gives it. */\n  reason?: string;",
    example: '{ "caller": "+15555550122", "reason": "billing question", "source": "voice" }',
    routedFields: ["reason"],
    replyTo: "caller",
    senderName: "scheduleCallback",
    sender: `/** Stands in for your telephony provider's API: books a callback; swap in the real call. */
function scheduleCallback(to: string, text: string) {
  return { callbackId: \`call_\${crypto.randomUUID()}\`, channel: "voice", to: mask(to), note: text, scheduledAt: new Date().toISOString() };
}`,
    // Staff call back during a callback window rather than at once; the run sleeps durably.
    extraSteps: `    await step.sleep("wait for the callback window", "5 minutes");\n`,
  },
};

/** The loop module for a workspace, extending `Workflow` from `health/loop`. */
export function loopTemplate(name: string, channel: Channel): string {
  const t = templates[channel];
  const cls = className(name);
  return `/**
 * ${name}: a ${channel} loop scaffolded by \`health init\`. Administrative only: it validates what
 * arrived, routes it to a staff queue by keyword and acknowledges it. It never interprets
 * clinical content and gives no clinical advice.
 *
 * Trigger it with a JSON body such as
 *   ${t.example}
 */
import { type HealthEvent, type HealthStep, NonRetryableError, Workflow } from "health/loop";

export interface Inbound {
${t.fields}
  /** Set by the caller when a loop must branch on where a trigger came from. */
  source?: string;
}

type Queue = "scheduling" | "billing" | "records" | "front-desk";

/** First match wins; anything else goes to the front desk, which sorts it by hand. */
const QUEUE_RULES: ReadonlyArray<readonly [RegExp, Queue]> = [
  [/\\b(?:appointment|reschedul\\w*|cancel\\w*|book\\w*)\\b/i, "scheduling"],
  [/\\b(?:bill\\w*|invoice\\w*|payment\\w*|statement\\w*)\\b/i, "billing"],
  [/\\b(?:records?|release|transfer)\\b/i, "records"],
];

export class ${cls} extends Workflow<Inbound | undefined> {
  async run(event: HealthEvent<Inbound | undefined>, step: HealthStep): Promise<unknown> {
    const checked = await step.do("validate", () => validate(event.body));
    if (checked.problems.length > 0) return { status: "rejected", problems: checked.problems };
    const queue = await step.do("route to staff queue", () => routeTo(checked.text));
${t.extraSteps}    // Delivery is the flaky part in real deployments, hence retries; a permanent refusal is
    // thrown as NonRetryableError so it is not retried.
    const acknowledgement = await step.do(
      "acknowledge",
      { retries: { limit: 3, delay: "2 seconds", backoff: "exponential" }, timeout: "10 seconds" },
      () => {
        if (checked.replyTo === "") throw new NonRetryableError("nowhere to send the acknowledgement");
        return ${t.senderName}(checked.replyTo, \`Thanks, we passed this to our \${queue} team.\`);
      },
    );
    return { status: "routed", queue, acknowledgement };
  }
}

interface Checked {
  text: string;
  replyTo: string;
  problems: string[];
}

function validate(body: Inbound | undefined): Checked {
  if (typeof body !== "object" || body === null) return { text: "", replyTo: "", problems: ["the body must be a JSON object"] };
  // A JSON body is not typed at run time: anything but a string counts as absent.
  const text = [${t.routedFields.map((f) => `body.${f}`).join(", ")}]
    .map((value) => (typeof value === "string" ? value : ""))
    .join(" ")
    .trim();
  const replyTo = typeof body.${t.replyTo} === "string" ? body.${t.replyTo}.trim() : "";
  const problems: string[] = [];
  if (text === "") problems.push("there is nothing to route");
  if (replyTo === "") problems.push("${t.replyTo} is required to acknowledge");
  return { text, replyTo, problems };
}

function routeTo(text: string): Queue {
  return QUEUE_RULES.find(([pattern]) => pattern.test(text))?.[1] ?? "front-desk";
}

/** Keeps run records free of full contact details: only the last four characters stay. */
function mask(value: string): string {
  return value.length <= 4 ? "****" : \`\${"*".repeat(Math.min(8, value.length - 4))}\${value.slice(-4)}\`;
}

${t.sender}
`;
}

/**
 * tsconfig.json of a workspace. \`health/loop\` resolves through \`paths\` to the SDK of the CLI that
 * scaffolded it, so the workspace type-checks and builds with no install step; package.json also
 * names \`health\` as a dependency for tools that resolve through node_modules.
 */
export function tsconfigTemplate(sdkPath: string): string {
  const config = {
    compilerOptions: {
      target: "ESNext",
      module: "Preserve",
      moduleResolution: "bundler",
      lib: ["ESNext", "DOM"],
      types: [],
      strict: true,
      noUncheckedIndexedAccess: true,
      verbatimModuleSyntax: true,
      allowImportingTsExtensions: true,
      noEmit: true,
      skipLibCheck: true,
      paths: { "health/loop": [sdkPath] },
    },
    include: ["loops"],
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

export function packageJsonTemplate(name: string, packageRoot: string): string {
  const pkg = {
    name,
    private: true,
    type: "module",
    scripts: { build: "health agent build", verify: "health verify" },
    dependencies: { health: `file:${packageRoot}` },
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}
