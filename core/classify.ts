/**
 * Intent classification of a builder's prompt. It runs on every planning request (server) and
 * every turn (CLI), on the raw prompt and again on its redacted form, and it never throws.
 *
 * 1. clinical_blocked, the safety boundary: the prompt asks for clinical judgement about a body,
 *    a patient or people in general, or for an agent that would give it (the labelling guide,
 *    `eval/safety/GUIDE.md`, defines it with its categories). Two parts decide it:
 *    - a few hard rules for asks that are clinical whatever surrounds them, matched on what the
 *      builder says in their own voice (quoted passages are blanked out: a refusal test quoting
 *      "should I double my dose?" is not the builder's question);
 *    - the learned model of `core/safety/model.ts`, trained on the labelled corpus, which reads
 *      everything else, quotes, reported speech and builder framing included;
 *    - and one hard rule the other way: a short prompt without a single clinical word ("help",
 *      "deploy") is a builder's, whatever the model makes of so little text.
 *    A block carries the category that fired (`medication_dosing`, `urgency_triage`, …).
 * 2. explain: a question about health itself ("explain …", "what is a loop", "help").
 * 3. list_tools: "list tools", "which tools are available", "tools list".
 * 4. build_agent: a build verb followed closely by an agent noun ("build an intake agent").
 * 5. build_loop: deploy, ship, publish, release, go live, compile, "build my loop", "agent build".
 * 6. configure_route: route, routing, router, forward, escalate, hand off, dispatch.
 * 7. verify_workspace: verify, validate, check, lint, test, eval(s), evaluate.
 * 8. authenticate: log in, sign in, authenticate, credentials, API key or token.
 * 9. build_agent: anything else a builder types.
 */
import type { Intent } from "./intents.ts";
import type { BlockedCategory } from "./safety/categories.ts";
import { MAX_FEATURE_CHARS, outerText } from "./safety/features.ts";
import { fold } from "./safety/fold.ts";
import { safetyModel } from "./safety/model.ts";
import { vocab } from "./safety/vocab.ts";

/**
 * Rules are written with single spaces for readability; any run of whitespace matches one, so
 * "treatment\n  plan" cannot slip past the boundary.
 */
function compile(source: string, flags = "i"): RegExp {
  return new RegExp(source.replaceAll(" ", String.raw`\s+`), flags);
}

const SELF = String.raw`(?:i|we|me|my (?:\w+ )?(?:son|daughter|child|kid|baby|toddler|wife|husband|partner|mother|father|mom|mum|dad|grandmother|grandfather|grandma|grandpa))`;
const EMERGENCY = String.raw`(?:the )?(?:er|e\.r\.?|emergency(?: room| department| dept)?|a&e|urgent care|911|999|ambulance|hospital)`;
/**
 * Not after a negation or an attack in the same clause: "the bot must not tell them what to do" is
 * a guardrail, "trick the bot into recommending a dose" a red-team probe. It follows the verb it
 * guards (the look-behind then runs only where the verb matched, not at every character).
 */
const NOT_NEGATED = String.raw`(?<!(?:\b(?:not|never|no|nor|without|instead of|rather than|cannot|avoid|refuses?|stop|into|trick\w*|jailbreak\w*|inject\w*|attack\w*|probes?|red.?team\w*|adversarial|tries to|trying to|attempts? to|instructions)\b|n't)[^.?!;]{0,60})`;

/**
 * Asks that are clinical in any setting, each with the category it names: a person asking about
 * the ER or a dose for themselves, and software told to give the judgement itself ("tells them
 * what to do", "decides which antibiotic", "issues the approval"). They read the builder's own
 * words only (`ownWords`: no quotes, no reported speech), so quoting one in a test or a guardrail
 * does not trip it, and they do not fire after a negation.
 */
const hardRules: ReadonlyArray<readonly [RegExp, BlockedCategory]> = [
  [
    compile(String.raw`\bshould ${SELF} (?:go to|call|head to|take (?:him|her|them) to) ${EMERGENCY}\b`),
    "urgency_triage",
  ],
  [
    compile(
      String.raw`\bhow (?:much|many) (?:mg |milligrams |ml |units |pills |tablets |capsules |puffs |drops )?(?:of (?:\w+ ){1,3})?(?:should|can|do|does|could|would) ${SELF} (?:take|give|use|inject)\b`,
    ),
    "medication_dosing",
  ],
  [
    compile(
      String.raw`\b(?:tell|tells|telling|advise|advises|advising)${NOT_NEGATED} (?:them|the (?:patient|parent|caller|member|user)s?|her|him|people|each patient) (?:what to do|whether (?:to|they|it)|how (?:much|many|urgently|to treat)|which (?:dose|medication|antibiotic|drug)|the (?:right|correct) dose)`,
    ),
    "treatment_recommendation",
  ],
  [
    compile(
      String.raw`\b(?:decide|decides|determine|determines|judge|judges|pick|picks|choose|chooses|select|selects)\b${NOT_NEGATED}[^.?!]{0,30}\b(?:which (?:antibiotic|medication|drug|dose|labs?|tests?|treatment)|the (?:right |correct )?(?:dose|dosage|antibiotic|treatment)|if (?:it|this|the \w+) (?:warrants|needs|requires|is medically necessary)|medically necessary|whether (?:to|they|the patient) (?:stop|start|switch|go|be seen|need))`,
    ),
    "clinician_decision",
  ],
  [
    compile(
      String.raw`\b(?:issue|issues|issuing|make|makes|making|grant|grants|granting|auto-?(?:approve|deny))\w*${NOT_NEGATED} (?:the )?(?:approval|denial|approvals|denials|determination|determinations)\b`,
    ),
    "prior_authorization",
  ],
  [
    compile(
      String.raw`\b(?:give|gives|giving|provide|provides|providing|offer|offers|offering)\b${NOT_NEGATED}(?: \w+){0,2} (?:medical|clinical|medication|health|dosing|treatment) advice\b`,
    ),
    "treatment_recommendation",
  ],
  [
    compile(
      String.raw`\brecommend(?:s|ed|ing)?${NOT_NEGATED} (?:a |an |the |which )?(?:treatments?|therap(?:y|ies)|medications?|doses?|drugs?|antibiotics?)\b`,
    ),
    "treatment_recommendation",
  ],
  [
    compile(
      String.raw`\bdiagnos(?:e|es|ing)${NOT_NEGATED} (?:the |a |my |his |her |their |each )?(?:patients?|conditions?|rash(?:es)?|symptoms?|illness(?:es)?|diseases?|skin|infections?)\b`,
    ),
    "diagnosis",
  ],
];

/**
 * All the hard rules as one pattern (they share their flags, and none refers to a group): it
 * matches exactly when one of them does. Most prompts fire none, and one scan of the text tells so
 * at half the cost of a scan per rule; only a prompt where one fires is read rule by rule, for the
 * first rule's category.
 */
const ANY_HARD_RULE = new RegExp(hardRules.map(([rule]) => `(?:${rule.source})`).join("|"), "i");

/**
 * The unambiguous builder case: a short prompt with no clinical word in it ("help", "deploy",
 * "whoami", "what does --exec do") cannot be asking for clinical advice, whatever the model makes
 * of so little text. Clinical words: the medical vocabulary, numbers, and the everyday words a
 * short clinical question is made of ("is it covered?", "what's wrong with me").
 */
const QUIET_MAX_WORDS = 6;
const WORD = /[a-z][a-z'-]*/g;
const CLINICAL_WORD =
  /\b(?:cover\w*|insur\w*|plans?|copays?|deductibles?|eligib\w*|elig|benefits?|prior auth\w*|pa|dos(?:e|es|age|ing)|mg|mcg|ml|er|emergency|911|urgent|pain\w*|hurts?|fever|rash|sick|ill|pregnan\w*|baby|babies|kids?|child\w*|sons?|daughters?|mom|dad|mother|father|wife|husband|symptoms?|diagnos\w*|treat\w*|medic\w*|meds?|pills?|drugs?|doctors?|nurses?|hospital|mri|ct|x-?ray|scan|labs?|tests? results?|blood|heart|ptsd|adhd|depress\w*|anxi\w*|normal|safe|bad|worry|worried|wrong|should i|can i|do i)\b/;

function isQuiet(text: string): boolean {
  if (/\d/.test(text) || CLINICAL_WORD.test(text)) return false;
  // One word past the most a quiet prompt has is enough to tell: a long prompt's words are not all listed.
  const words: string[] = [];
  WORD.lastIndex = 0;
  for (let match = WORD.exec(text); match !== null && words.length <= QUIET_MAX_WORDS; match = WORD.exec(text)) {
    words.push(match[0]);
  }
  if (words.length > QUIET_MAX_WORDS) return false;
  const { medical } = vocab();
  if (words.some((word) => word.length >= 4 && medical.has(word))) return false;
  // And it must read as a request to health itself: a command word, or one or two words.
  return words.length <= 2 || EXPLAIN.test(text) || builderRuleFires(text);
}

const EXPLAIN = compile(
  String.raw`^\s*(?:(?:can|could) you |please )?(?:explain\b|describe\b|tell me about\b|why\b|help\s*[.!?]?\s*$|how (?:does|do) .{0,80}\bwork\b|what(?:['’]s| is| are| does| do) (?:a |an |the )?(?:health|loops?|routes?|routing|plans?|tool plans?|manifests?|workspaces?|intents?|gates?|steps?|agents?|commands?|tools?|sanitiz\w*|redact\w*|verify|hosted)\b)`,
);

const BUILD_VERB = "build|create|make|scaffold|spin up|set up|setup|stand up|develop|generate|design|prototype";
const AGENT_NOUN = "agents?|bots?|chatbots?|assistants?|copilots?";

/**
 * Builder rules 3 to 8 in priority order. Each consumes little more than its keyword (what must
 * follow is in a lookahead), so in the shared scan one match does not hide another rule's keyword.
 */
const builderRules: ReadonlyArray<readonly [source: string, intent: Intent]> = [
  [
    String.raw`tools? list\b|(?:list|show|which|what|available|enumerate|see)\b(?=[\w\s'’-]{0,30}\btools?\b)`,
    "list_tools",
  ],
  [
    String.raw`(?:${BUILD_VERB})\b(?! (?:my|our|the|this|existing) (?:${AGENT_NOUN}|loop)\b)(?=[\w\s'’-]{0,60}?\b(?:${AGENT_NOUN})\b)`,
    "build_agent",
  ],
  [
    String.raw`(?:deploy\w*|redeploy\w*|ship|publish\w*|release|go live|compile|rebuild|agent build)\b|build (?:my|our|the|this|existing) (?:loop|agent)\b`,
    "build_loop",
  ],
  [
    String.raw`(?:rout(?:e|es|ed|ing)|router|forward\w*|escalat\w*|hand(?: )?offs?|hand (?:it |them )?off|dispatch\w*)\b`,
    "configure_route",
  ],
  [
    String.raw`(?:verif(?:y|ies|ying|ication)|validat\w*|check(?!-?in\b)\w*|lint\w*|tests?|testing|evals?|evaluat\w*|doctor|sanity)\b`,
    "verify_workspace",
  ],
  [
    String.raw`(?:log(?: )?in|log me in|sign(?: )?in|sign me in|authenticat\w*|re-?auth\w*|credentials?|api(?:-| )?keys?|access tokens?|(?:my|a|the|cli|system) (?:token|key))\b`,
    "authenticate",
  ],
];

/**
 * All builder rules in one alternation behind a shared `\b`: the engine visits each word once
 * instead of once per rule. Group `rN` says builder rule N fired; the lowest N wins.
 */
const BUILDER = compile(String.raw`\b(?:${builderRules.map(([source], i) => `(?<r${i}>${source})`).join("|")})`, "gi");

function firedRule(groups: Record<string, string | undefined> | undefined): number {
  for (let i = 0; i < builderRules.length; i++) {
    if (groups?.[`r${i}`] !== undefined) return i;
  }
  return builderRules.length;
}

function builderRuleFires(text: string): boolean {
  BUILDER.lastIndex = 0;
  return BUILDER.test(text);
}

function builderIntent(text: string): Intent {
  let best = builderRules.length;
  BUILDER.lastIndex = 0;
  for (let match = BUILDER.exec(text); match !== null && best > 0; match = BUILDER.exec(text)) {
    best = Math.min(best, firedRule(match.groups));
  }
  return builderRules[best]?.[1] ?? "build_agent";
}

/** Why a prompt was classified as it was: the intent, and for a block the category that fired. */
export interface Assessment {
  intent: Intent;
  /** Set exactly when the intent is `clinical_blocked`. */
  category: BlockedCategory | null;
}

/**
 * Reported speech without quote marks: what follows a colon on its line, bullet and numbered
 * lines, and the rest of a sentence after "things like", "such as", "e.g.", "the input is",
 * "asks", "texts"… (`[^.?!\n]` keeps the cut inside its sentence).
 */
const REPORTED = [
  /:[^\n]*/g,
  /^[ \t]*(?:[-*•]|\d{1,3}[.)])[ \t].*$/gm,
  /\b(?:like|such as|e\.g\.|for example|the input is|inputs? like|asks?|asked|asking|says?|said|texts?|texted|writes?|wrote|messages?|questions?)\b[^.?!\n]*/g,
];

/** The prompt in the builder's own voice: quotes blanked (`outerText`), reported speech cut. */
function ownWords(text: string): string {
  let own = outerText(text);
  for (const pattern of REPORTED) own = own.replace(pattern, " ");
  return own;
}

/**
 * What the hard rules alone say of a folded prompt: the category of the first clinical rule that
 * fires, "builder" for a quiet prompt, or null when the model must decide. The trainer uses it
 * too, so the threshold it picks is the one of rules and model together.
 */
export function ruleVerdict(text: string): BlockedCategory | "builder" | null {
  const own = ownWords(text);
  if (ANY_HARD_RULE.test(own)) {
    for (const [rule, category] of hardRules) {
      if (rule.test(own)) return category;
    }
  }
  return isQuiet(text) ? "builder" : null;
}

function assessFolded(text: string): Assessment {
  const rule = ruleVerdict(text);
  if (rule !== null && rule !== "builder") return { intent: "clinical_blocked", category: rule };
  const model = safetyModel();
  if (rule === null && model.assess(text, true).clinical)
    return { intent: "clinical_blocked", category: model.category(text, true) };
  if (EXPLAIN.test(text)) return { intent: "explain", category: null };
  return { intent: builderIntent(text), category: null };
}

export function assess(prompt: string): Assessment {
  // A non-string can only arrive through an untyped edge; the safe answer is the boundary.
  if (typeof prompt !== "string") return { intent: "clinical_blocked", category: "treatment_recommendation" };
  return assessFolded(fold(prompt.length > MAX_FEATURE_CHARS ? prompt.slice(0, MAX_FEATURE_CHARS) : prompt));
}

export function classify(prompt: string): Intent {
  return assess(prompt).intent;
}

/** True when the prompt asks for clinical advice. */
export function isClinical(prompt: string): boolean {
  return classify(prompt) === "clinical_blocked";
}

/** The best guess of what kind of clinical ask a prompt is, whether or not it was blocked. */
export function clinicalCategory(prompt: string): BlockedCategory {
  return safetyModel().category(fold(prompt.slice(0, MAX_FEATURE_CHARS)), true);
}
