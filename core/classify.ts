/**
 * Intent classification of a builder's prompt. It runs on every planning request (server) and
 * every turn (CLI), so it is three regular expressions compiled at module load (the clinical
 * rules, the anchored explain rule, and all builder rules in one alternation), about two scans of
 * the text in all, and it never throws.
 *
 * Rules, first match wins (all case-insensitive):
 *  1. clinical_blocked: the prompt asks for clinical judgement about a patient, or for an agent
 *     that would make it:
 *     - diagnosis: diagnose, diagnosis, prognosis ("diagnose why my loop fails" is debugging);
 *     - treatment recommendations: recommend a treatment or drug, treatment plan or options,
 *       how to treat;
 *     - prescribing or dosing: prescribe, dose, dosage, dosing, titrate, "how many mg";
 *     - medication advice: "should I take", "safe to take", drug interactions, "which
 *       medication should";
 *     - interpreting a patient's symptoms or results: interpret or review labs, imaging, vitals
 *       or symptoms, "what could be causing", "what do these symptoms mean", "what's wrong with",
 *       a patient who "has" or "presents with" a symptom;
 *     - benefit or insurance eligibility verification: benefits verification, "verify the
 *       patient's eligibility", "is the patient covered".
 *     Bare domain nouns a builder uses ("intake", "triage-routing loop", "prescription refill
 *     requests", "lab result notifications", "test coverage") are not clinical: routing,
 *     scheduling and messaging are operations, not advice.
 *  2. explain: a question about health itself ("explain …", "what is a loop", "how does routing
 *     work", "help").
 *  3. list_tools: "list tools", "which tools are available", "tools list".
 *  4. build_agent: a build verb followed closely by an agent noun ("build an intake agent",
 *     "create a scheduling bot"), unless it names an existing one ("build my agent" is rule 5).
 *  5. build_loop: deploy, ship, publish, release, go live, compile, "build my loop", "agent build".
 *  6. configure_route: route, routing, router, forward, escalate, hand off, dispatch.
 *  7. verify_workspace: verify, validate, check, lint, test, eval(s), evaluate.
 *  8. authenticate: log in, sign in, authenticate, credentials, API key or token.
 *  9. build_agent: anything else a builder types.
 */
import type { Intent } from "./intents.ts";

/** Longest prefix examined. Prompts are capped at 16 000 characters; this bounds the cost. */
const MAX_CLASSIFIED_CHARS = 16_000;

const SYMPTOMS =
  "pain|aches?|fever|cough|rash|nausea|vomiting|diarrh?o?ea|dizziness|dizzy|headaches?|migraines?|bleeding|swelling|fatigue|seizures?|palpitations|shortness of breath|chest pain|infection|lump|sore throat|numbness|insomnia|anxiety|depression|symptoms";

const RESULTS =
  "labs?|lab results?|lab values?|lab work|bloodwork|blood work|blood tests?|a1c|hba1c|cbc|metabolic panel|lipid panel|x-?rays?|mri|ct scans?|scans?|ecg|ekg|imaging|biopsy|pathology reports?|radiology reports?|vitals|symptoms";

/** Medicines by generic noun, by common name, or by a telling suffix (amoxicillin, atorvastatin). */
const MEDS =
  "medications?|medicines?|meds|pills?|tablets?|drugs?|antibiotics?|insulin|opioids?|steroids?|aspirin|tylenol|advil|motrin|acetaminophen|paracetamol|ibuprofen|naproxen|benadryl|warfarin|prednisone|\\w+(?:cillin|mycin|cycline|floxacin|prazole|statin|pril|sartan|olol|dipine|formin|gliptin|oxetine|afil|tidine|profen|codone|morphine)";

const WHOSE =
  "(?:my |the |these |this |those |his |her |their |a |(?:the |this |my )?patient['’]?s? |(?:the |this |my )?pt['’]?s? )?";

const SUBJECT =
  "(?:i|we|he|she|they|the patient|my patient|my (?:son|daughter|child|kid|baby|wife|husband|mother|father|mom|dad))";

/** Debugging words that make "diagnose" a builder's verb: "diagnose why my loop fails". */
const DEBUG_OBJECT =
  "(?:why|what|how|where|(?:the |my |our |this |a )?(?:loop|route|build|workspace|agent|server|errors?|failures?|bugs?|issues?|problems?|config\\w*|deploy\\w*|tests?|evals?|crash\\w*|latency|timeouts?|outages?|pipeline|queue|gateway|upstream))\\b";

/** Each source is one rule of the clinical boundary; see the module comment, rule 1. */
const clinicalSources = [
  // Diagnosis and prognosis.
  String.raw`diagnos(?:e|es|ed|ing)\b(?! ${DEBUG_OBJECT})`,
  String.raw`diagnos(?:is|es|ises|tician)\b`,
  String.raw`prognos(?:is|es|tic)\b`,
  `diagnostic (?:agent|bot|assistant|ai|model|advice|reasoning|opinion|suggestions?)`,
  // Treatment recommendations.
  String.raw`recommend\w* (?:a |an |the |some |which )?(?:treatments?|therap(?:y|ies)|doses?|dosages?|prescriptions?|${MEDS})\b`,
  String.raw`treatment (?:plans?|recommendations?|options?|advice|decisions?)\b`,
  String.raw`(?:best|right|first(?:-| )line|appropriate) (?:treatment|therapy|medication|drug|antibiotic)s?\b`,
  String.raw`how (?:should|do|can|would|to) (?:i |we |you |they )?treat\b`,
  String.raw`treat(?:s|ing)? (?:my |his |her |their |this |the |a )?(?:patients?|conditions?|infections?|diseases?|illness(?:es)?|${SYMPTOMS})\b`,
  // Prescribing and dosing.
  String.raw`prescrib(?:e|es|ed|ing)\b`,
  String.raw`dos(?:e|es|age|ages|ing)\b`,
  String.raw`titrat\w*`,
  String.raw`how (?:much|many) (?:mg|milligrams?|ml|mcg|micrograms?|units?|pills?|tablets?|capsules?)\b`,
  // Medication advice.
  String.raw`(?:medication|medical|clinical|drug) advice\b`,
  String.raw`(?:drug|medication) interactions?\b`,
  String.raw`(?:what|which) (?:${MEDS}) (?:should|can|could|would|to|is|are)\b`,
  String.raw`should ${SUBJECT} (?:take|stop|start|keep|increase|decrease|double|skip|switch)(?: taking)? (?:a |an |the |my |his |her |their |some |more |less )?(?:${MEDS})\b`,
  String.raw`(?:can|could) ${SUBJECT} (?:take|mix|combine|give) (?:a |an |the |my |his |her |their |some |more )?(?:${MEDS})\b`,
  String.raw`safe to (?:take|mix|combine|give)\b`,
  String.raw`(?:increase|decrease|adjust|change|double|taper|stop)\w* ${WHOSE}(?:insulin|medications?|meds)\b(?! (?:reminders?|refills?|lists?|adherence|schedules?|records?|history|logs?|inventory|orders?)\b)`,
  // Interpreting a patient's symptoms or results.
  String.raw`(?:interpret|read|explain|analy[sz]e|evaluate|assess|review)\w* ${WHOSE}(?:${RESULTS})\b`,
  String.raw`what (?:do|does|could|might) ${WHOSE}(?:${RESULTS}) (?:mean|suggest|indicate|show)\b`,
  String.raw`symptoms? (?:mean|means|suggest|suggests|indicate|indicates|point to)\b`,
  String.raw`my symptoms\b`,
  String.raw`what(?:['’]s| is) wrong with (?:me|my|him|her|them|the patient|this patient)\b`,
  String.raw`what (?:could|might|would|can|is) (?:be )?caus\w* ${WHOSE}(?:(?:high|low|elevated|abnormal|severe|persistent|chronic) )?(?:${SYMPTOMS}|blood pressure|glucose|heart rate)\b`,
  String.raw`${SUBJECT.replace("(?:i|", "(?:patient|pt|i|")} (?:has|have|is having|am having|presents? with|reports?|complains? of|suffers? from) (?:a |an |some |severe |mild |bad |sudden )?(?:${SYMPTOMS})\b`,
  String.raw`triage (?:this |the |my |a |our )?(?:patients?|pt)\b`,
  // Benefit and insurance eligibility verification.
  String.raw`benefits? (?:verification|verifications|check|checks|investigation|eligibility)\b`,
  String.raw`eligibility (?:verification|verifications|check|checks|determination|status|inquiry|inquiries)\b`,
  String.raw`insurance (?:verification|eligibility|check|checks)\b`,
  String.raw`(?:verif(?:y|ies|ying)|check(?:s|ing)?|confirm(?:s|ing)?|determin(?:e|es|ing)|look(?:s|ing)? up) (?:[\w'’]+ ){0,3}?(?:eligibility|eligible|benefits|insurance)\b`,
  String.raw`is (?:the |this |my |our )?(?:patient|member|he|she|they) (?:eligible|covered)\b`,
];

/**
 * Rules are written with single spaces for readability; any run of whitespace matches one, so
 * "treatment\n  plan" cannot slip past the boundary.
 */
function compile(source: string, flags = "i"): RegExp {
  return new RegExp(source.replaceAll(" ", String.raw`\s+`), flags);
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

const CLINICAL = compile(String.raw`\b(?:${clinicalSources.join("|")})`);

/**
 * All builder rules in one alternation behind a shared `\b`: the engine visits each word once
 * instead of once per rule. Group `rN` says builder rule N fired; the lowest N wins.
 */
const BUILDER = compile(String.raw`\b(?:${builderRules.map(([source], i) => `(?<r${i}>${source})`).join("|")})`, "gi");

/**
 * Prompts are ASCII in the common case. Anything else is folded first (NFKC, curly quotes,
 * invisible format characters removed) so "diag\u200Bnose" or full-width letters cannot slip past.
 */
function normalize(prompt: string): string {
  const text = prompt.slice(0, MAX_CLASSIFIED_CHARS);
  if (!/[^\x00-\x7f]/.test(text)) return text;
  return text
    .normalize("NFKC")
    .replace(/\p{Cf}/gu, "")
    .replace(/[‘’ʼ]/g, "'");
}

/** True when the prompt asks for clinical advice (rule 1 alone). */
export function isClinical(prompt: string): boolean {
  return typeof prompt !== "string" || CLINICAL.test(normalize(prompt));
}

function firedRule(groups: Record<string, string | undefined> | undefined): number {
  for (let i = 0; i < builderRules.length; i++) {
    if (groups?.[`r${i}`] !== undefined) return i;
  }
  return builderRules.length;
}

function builderIntent(text: string): Intent {
  let best = builderRules.length;
  BUILDER.lastIndex = 0;
  for (let match = BUILDER.exec(text); match !== null && best > 0; match = BUILDER.exec(text)) {
    best = Math.min(best, firedRule(match.groups));
  }
  return builderRules[best]?.[1] ?? "build_agent";
}

export function classify(prompt: string): Intent {
  // A non-string can only arrive through an untyped edge; the safe answer is the boundary.
  if (typeof prompt !== "string") return "clinical_blocked";
  const text = normalize(prompt);
  if (CLINICAL.test(text)) return "clinical_blocked";
  if (EXPLAIN.test(text)) return "explain";
  return builderIntent(text);
}
