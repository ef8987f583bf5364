/**
 * The embedded, rule-based planner: what `health code` uses offline and what the server uses
 * when no upstream model is configured. It is deterministic and pure.
 *
 * Commands are built only from fixed words and from slugs (`[a-z0-9-]`) derived from the prompt
 * or the manifest, never from raw prompt text, so every command passes the gate whatever the
 * prompt says; the route prompt is a generated sentence in double quotes.
 */
import type { DraftPlan, DraftStep } from "../schema/wire.ts";
import { type Channel, findCommand, isChannel } from "./commands.ts";
import type { Intent } from "./intents.ts";
import { type BlockedCategory, reframings } from "./safety/categories.ts";

export interface PlanInput {
  /** The redacted prompt. */
  prompt: string;
  intent: Intent;
  /** The workspace manifest (`.health` of the builder's workspace), or null when there is none. */
  manifest: Record<string, unknown> | null;
}

export const CLINICAL_REDIRECT_MESSAGE = redirectMessage(null);

/**
 * The redirect (docs/interface.md §4.1 rule 1): what health is, and builder tasks to ask for instead, the first
 * one fitted to the kind of clinical ask when it is known. Six lines at most.
 */
function redirectMessage(category: BlockedCategory | null): string {
  const what = category === null ? "" : ` (${category.replaceAll("_", " ")})`;
  const first =
    category === null
      ? '- data sourcing: "route intake forms from our SMS line to front-desk staff"'
      : `- instead: "${reframings[category]}"`;
  return [
    `**This asks for clinical advice${what}, so there is no plan.**`,
    "health is developer infrastructure for healthcare builders: it gives no diagnosis, treatment, dosing, medication or benefit-eligibility advice.",
    "Reframe it as a builder or operator task, for example:",
    first,
    '- eval design: "set up eval design for our triage-routing loop"',
    '- deployment: "deploy my intake loop"',
  ].join("\n");
}

/** The response to a clinical prompt (docs/interface.md §4.1 rule 1): the redirect and no steps. */
export function blockedPlan(category: BlockedCategory | null = null): DraftPlan {
  return {
    assistant_message: category === null ? CLINICAL_REDIRECT_MESSAGE : redirectMessage(category),
    tool_plan: [],
  };
}

// ---------------------------------------------------------------------------------------------
// What the prompt is about, as slugs.

/** Only this much of the prompt is read: the rules look for short phrases. */
const MAX_READ_CHARS = 4_000;
const DEFAULT_CHANNEL: Channel = "web";
const DEFAULT_TASK = "general";

/** First rule that matches wins, so the more specific channels come first. */
const channelRules: ReadonlyArray<readonly [RegExp, Channel]> = [
  [/\b(?:sms|mms|text messag\w*|texting|texts|whatsapp)\b/, "sms"],
  [/\bfax\w*\b/, "fax"],
  [/\b(?:e-?mails?|inbox)\b/, "email"],
  [/\b(?:voice|ivr|phone calls?|calls?|hotline|phone line|telephone)\b/, "voice"],
  [/\b(?:web|website|site|portal|chat widget|webchat|browser|online)\b/, "web"],
];

/** Tasks recognised by keyword when no "<task> agent" phrase names one. */
const taskRules: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bintake\b/, "intake"],
  [/\b(?:re)?schedul\w*|\bappointments?\b|\bbookings?\b/, "scheduling"],
  [/\breminders?\b/, "reminders"],
  [/\breferrals?\b/, "referrals"],
  [/\brefills?\b/, "refills"],
  [/\bbilling\b|\binvoices?\b|\bpayments?\b/, "billing"],
  [/\bclaims?\b/, "claims"],
  [/\bprior auth\w*\b/, "prior-auth"],
  [/\b(?:records? requests?|medical records?)\b/, "records"],
  [/\btriage\b/, "triage-routing"],
  [/\bfollow[- ]?ups?\b/, "follow-up"],
  [/\bonboarding\b/, "onboarding"],
  [/\bfaqs?\b|\bquestions\b/, "faq"],
  [/\bsurveys?\b|\bfeedback\b/, "surveys"],
  [/\bevals?\b|\bevaluations?\b/, "evals"],
];

/** "<word> agent", "<word> loop", "<word> forms": the word names the task. */
const TASK_PHRASE =
  /\b([a-z][a-z0-9]{0,30}(?:-[a-z0-9]{1,30}){0,3})\s{1,3}(?:agents?|loops?|bots?|assistants?|workflows?|routes?|forms?|requests?|messages?|queues?|lines?|pipelines?)\b/g;

/** Words that can sit before "agent" without naming a task. */
const NOT_A_TASK: ReadonlySet<string> = new Set(
  (
    "a an the my our your their this that these those new simple basic first small existing own ai " +
    "llm smart custom whole entire same another agent loop bot and or for to of with incoming inbound " +
    "outbound all every each some any clinic clinics hospital practice health name build " +
    "create make deploy route set up run ship verify list tools tool line staff team patient patients " +
    "user users test one two three good sms email e-mail fax web voice text phone chat call calls"
  ).split(" "),
);

/** "to the front-desk staff": who the route hands off to. */
const HANDOFF =
  /\bto\s+(?:the\s+|our\s+|a\s+)?([a-z][a-z]*(?:-[a-z]+){0,2})\s+(?:staff|team|queue|desk|nurses?|office|coordinators?)\b/;

function slugify(text: string, maxChars = 48): string {
  return text
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+/, "")
    .slice(0, maxChars)
    .replace(/-+$/, "");
}

/** The prompt with placeholders removed, lower case: "[FAX]" must not read as the fax channel. */
function readable(prompt: string): string {
  return (typeof prompt === "string" ? prompt : "")
    .slice(0, MAX_READ_CHARS)
    .replace(/\[[A-Z_]+\]/g, " ")
    .toLowerCase();
}

function channelOf(text: string, manifest: Record<string, unknown> | null): Channel {
  const declared = manifest?.channel;
  if (typeof declared === "string" && isChannel(declared)) return declared;
  return channelRules.find(([pattern]) => pattern.test(text))?.[1] ?? DEFAULT_CHANNEL;
}

function taskOf(text: string): string {
  for (const match of text.matchAll(TASK_PHRASE)) {
    const word = slugify(match[1] ?? "", 30);
    if (word.length >= 3 && !NOT_A_TASK.has(word) && /^[a-z]/.test(word)) return word;
  }
  return taskRules.find(([pattern]) => pattern.test(text))?.[1] ?? DEFAULT_TASK;
}

function handoffOf(text: string): string {
  const target = slugify(HANDOFF.exec(text)?.[1] ?? "", 24);
  return target.length >= 3 && !NOT_A_TASK.has(target) ? target : "";
}

/** The workspace's own name, when the manifest has one: then the workspace exists. */
function workspaceOf(manifest: Record<string, unknown> | null): string | null {
  const name = manifest?.name;
  if (typeof name !== "string" || name.trim().length === 0) return null;
  return slugify(name) || "workspace";
}

interface Subject {
  channel: Channel;
  task: string;
  handoff: string;
  workspace: string | null;
  /** The builder talks about evals: the message says how they fit in. */
  evals: boolean;
}

function subjectOf(input: PlanInput): Subject {
  const text = readable(input.prompt);
  return {
    channel: channelOf(text, input.manifest),
    task: taskOf(text),
    handoff: handoffOf(text),
    workspace: workspaceOf(input.manifest),
    evals: /\bevals?\b|\bevaluat\w*|\btest cases?\b/.test(text),
  };
}

// ---------------------------------------------------------------------------------------------
// Steps.

const CHANNEL_LABELS: Readonly<Record<Channel, string>> = {
  sms: "SMS",
  email: "email",
  fax: "fax",
  web: "web",
  voice: "voice",
};

function words(slug: string): string {
  return slug.replaceAll("-", " ");
}

function step(kind: string, command: string, purpose: string): DraftStep {
  const argv = command.split(" ").slice(1);
  return { kind, command, purpose, requires_auth: findCommand(argv)?.requiresAuth === true };
}

function agentName(subject: Subject): string {
  return `${subject.task}-agent`;
}

function routeName(subject: Subject): string {
  return `${subject.task}-${subject.channel}`;
}

function handoffPhrase(subject: Subject): string {
  return subject.handoff === "" ? "staff" : `${words(subject.handoff)} staff`;
}

/** The route's prompt: a fixed sentence around slugs, so it holds no quote or metacharacter. */
function routePrompt(subject: Subject): string {
  return `Handle ${words(subject.task)} requests on the ${CHANNEL_LABELS[subject.channel]} channel and hand off to ${handoffPhrase(subject)} when unsure.`;
}

const steps = {
  init: (s: Subject) =>
    step(
      "scaffold",
      `health init ${agentName(s)} --channel ${s.channel}`,
      `Scaffold the ${agentName(s)} workspace for ${CHANNEL_LABELS[s.channel]}.`,
    ),
  route: (s: Subject) =>
    step(
      "route",
      `health route --task ${s.task} --prompt "${routePrompt(s)}" --save --name ${routeName(s)}`,
      `Save the ${routeName(s)} route for ${words(s.task)} requests.`,
    ),
  tools: () => step("tools", "health tools list", "List the tools the agent may call."),
  build: () => step("build", "health agent build", "Type-check and bundle the loop into .health/build/."),
  verify: () => step("verify", "health verify", "Check the workspace, its manifest and its routes."),
  login: () => step("auth", "health login", "Sign the CLI in; credentials never go into a plan."),
};

/** Shown at the end of plans that touch prompts: what the tool does with patient data. */
const PRIVACY_LINE = "Nothing runs until you pick a step; prompts are redacted before they leave your machine.";

/** Eval design is the builder's own work; the plan says where it fits without inventing commands. */
const EVALS_LINE =
  "- For eval design, keep redacted test cases next to the route and rerun `health verify` after each change.";

function message(lines: readonly string[]): string {
  return lines.join("\n");
}

function buildAgentPlan(s: Subject): DraftPlan {
  const scaffold = s.workspace === null;
  return {
    assistant_message: message([
      `**Plan: ${words(s.task)} agent on ${CHANNEL_LABELS[s.channel]}**`,
      scaffold
        ? `- Scaffold \`${agentName(s)}\` for the \`${s.channel}\` channel.`
        : `- Reuse the workspace \`${s.workspace}\` (already initialised) on \`${s.channel}\`.`,
      `- Save the route \`${routeName(s)}\`, handing off to ${handoffPhrase(s)} when unsure.`,
      "- List the tools, build the loop, then verify the workspace.",
      PRIVACY_LINE,
    ]),
    tool_plan: [...(scaffold ? [steps.init(s)] : []), steps.route(s), steps.tools(), steps.build(), steps.verify()],
  };
}

function configureRoutePlan(s: Subject): DraftPlan {
  return {
    assistant_message: message([
      `**Plan: route ${words(s.task)} requests on ${CHANNEL_LABELS[s.channel]}**`,
      `- Save the route \`${routeName(s)}\` for the \`${s.task}\` task, handing off to ${handoffPhrase(s)} when unsure.`,
      "- Verify the workspace so the route is checked before it runs.",
      ...(s.evals ? [EVALS_LINE] : []),
      PRIVACY_LINE,
    ]),
    tool_plan: [steps.route(s), steps.verify()],
  };
}

function buildLoopPlan(s: Subject): DraftPlan {
  return {
    assistant_message: message([
      `**Plan: build and verify ${s.workspace === null ? "the loop" : `\`${s.workspace}\``}**`,
      "- Type-check and bundle the agent loop into `.health/build/`.",
      "- Verify the workspace afterwards.",
    ]),
    tool_plan: [steps.build(), steps.verify()],
  };
}

function verifyPlan(s: Subject): DraftPlan {
  return {
    assistant_message: message([
      "**Plan: verify the workspace**",
      "- `health verify` checks the manifest, the routes and the tools; fix what it reports and run it again.",
      ...(s.evals ? [EVALS_LINE] : []),
    ]),
    tool_plan: [steps.verify()],
  };
}

function listToolsPlan(): DraftPlan {
  return {
    assistant_message: message([
      "**Plan: list the tools**",
      "- `health tools list` shows the tools your agent may call (`--json` for machine-readable output).",
    ]),
    tool_plan: [steps.tools()],
  };
}

function authenticatePlan(): DraftPlan {
  return {
    assistant_message: message([
      "**Plan: sign in**",
      "- `health login` signs the CLI in interactively; tokens and passwords never go into a plan.",
    ]),
    tool_plan: [steps.login()],
  };
}

function explainPlan(): DraftPlan {
  return {
    assistant_message: message([
      "**How health works**",
      "- `health code` turns a builder prompt into a short plan of `health` commands; nothing runs until you pick a step.",
      "- The usual flow: `init` a workspace, `route` a task, `tools list`, `agent build`, then `verify`.",
      "- It is developer infrastructure: prompts are redacted first and clinical questions get no plan.",
    ]),
    tool_plan: [],
  };
}

/** The plan for a prompt of the given intent: at most 6 lines of message, gate-safe commands. */
export function planLocally(input: PlanInput): DraftPlan {
  const subject = subjectOf(input);
  switch (input.intent) {
    case "clinical_blocked":
      return blockedPlan();
    case "build_agent":
      return buildAgentPlan(subject);
    case "configure_route":
      return configureRoutePlan(subject);
    case "build_loop":
      return buildLoopPlan(subject);
    case "verify_workspace":
      return verifyPlan(subject);
    case "list_tools":
      return listToolsPlan();
    case "authenticate":
      return authenticatePlan();
    case "explain":
      return explainPlan();
    default: {
      // An intent from an untyped edge: the safest plan is none.
      const unreachable: never = input.intent;
      return { assistant_message: `No plan: unknown intent (${typeof unreachable}).`, tool_plan: [] };
    }
  }
}
