/**
 * Trains the name tagger (`core/safety/name-model.json`, see `core/safety/name-tagger.ts`) on the
 * training part of the redaction corpus, `eval/safety/train/redact*.jsonl`. The held-back part is
 * never read here.
 *
 *   bun eval/safety/train-names.ts         train, cross-validate, write the model
 *   bun eval/safety/train-names.ts --cv    cross-validate only, write nothing
 *   bun eval/safety/train-names.ts --errors   cross-validate, and list the out-of-writer errors
 *
 * Every candidate word of a case (names.ts's `isTaggerCandidate`) is one example: positive when
 * it lies inside one of the case's labelled names, negative otherwise; words inside other kinds
 * of identifiers (a street name, a payer id) are left out, since another detector owns them. A
 * negative inside one of the case's keep strings weighs `keepWeight` examples: writers list there
 * the look-alikes a builder's prompt must keep ("Brilinta", "Rose Bowl", "Team Falcon").
 * Logistic regression by AdaGrad, as for the clinical model. The threshold comes from
 * cross-validation with one writer's file held out at a time, measured on the words the tagger is
 * asked about at run time (scored by `isTaggerScored` and left by every rule): the lowest score at
 * which fewer out-of-writer non-name words are taken for names than `maxFalsePerThousand` of all
 * candidate words that are no name, so the tagger adds recall without eating the words a
 * builder's prompt is made of; then a threshold per candidate group spends the same budget at one
 * calibrated probability (`groupThresholdsOf`).
 *
 * `bun eval/safety/cv-redact.ts` measures the whole redactor the same way, writer by writer.
 *
 * Deterministic: the same corpus, vocabulary and settings give the same bytes.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { encodeWeights } from "../../core/safety/model.ts";
import { findIdentifiers, type IdentifierSpan, placeholder, replaceSpans } from "../../core/redact.ts";
import {
  CANDIDATE_GROUPS,
  candidateGroup,
  type NameModelFile,
  NameTagger,
  nameModelPath,
  nameTagger,
  tokenFeatures,
  useNameTagger,
} from "../../core/safety/name-tagger.ts";
import {
  isTaggerCandidate,
  isTaggerScored,
  type Token,
  taggerMedical,
  taggerStanding,
  tokenize,
} from "../../core/safety/names.ts";
import { vocabPath } from "../../core/safety/vocab.ts";
import { hashTrainingFiles, type RedactCase, redactCases, type Sourced } from "./corpus.ts";
import { crossValidateLogistic, type Logistic, type Sample, trainLogistic } from "./logistic.ts";

const defaults = {
  bits: 17,
  epochs: 30,
  learningRate: 0.05,
  biasLearningRate: 0.3,
  l2: 1e-6,
  /** Out-of-writer false names allowed, per thousand candidate words that are no name. */
  maxFalsePerThousand: 1.6,
  seed: 20261124,
  /**
   * Weight of a word inside a keep string that is no name: writers list there the look-alikes a
   * redactor must leave ("Brilinta", "Rose Bowl"), the errors that cost a builder the most.
   */
  keepWeight: 6,
  /** A threshold per candidate group (see groupThresholdsOf), or one for all. */
  perGroup: true,
  /** A group with fewer non-name words than this among those asked keeps the shared threshold. */
  minGroupNegatives: 300,
};
const settings: typeof defaults = { ...defaults, ...JSON.parse(process.env.NAME_TRAIN_SETTINGS ?? "{}") };

export interface Example {
  indices: Uint32Array;
  name: boolean;
  writer: string;
  /** Whether the tagger is asked about the word at run time (the rules left it, and it is scored). */
  asked: boolean;
  /** How much the example counts: a look-alike a writer listed to be kept counts more. */
  weight: number;
  /** The candidate's group (name-tagger.ts's candidateGroup), which may have its own threshold. */
  group: number;
  /** The case and the word, for reading what the tagger gets wrong. */
  where: string;
}

/** Every occurrence of each value in the text, as [start, end) ranges. */
export function occurrences(text: string, values: readonly string[]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const value of values) {
    if (value.length === 0) continue;
    for (let at = text.indexOf(value); at >= 0; at = text.indexOf(value, at + 1)) out.push([at, at + value.length]);
  }
  return out;
}

export const inside = (ranges: ReadonlyArray<[number, number]>, start: number, end: number) =>
  ranges.some(([a, b]) => start < b && a < end);

/**
 * Writers the tagger does not learn from. The twelfth writer (`redact-r11.jsonl`) wrote keep cases
 * on purpose, two in three of its cases, most of them capitalised look-alikes: learned from, it
 * fills the false-name budget (a share of all candidate words that are no name) with words of a
 * kind the other writers rarely write, and the threshold that keeps under it loses 2.4 points of
 * names on every other writer (writer-out CV, 89.4% -> 87.0%). The rules still answer to it, and
 * the measurements read it.
 */
const NOT_FOR_THE_TAGGER: ReadonlySet<string> = new Set(["redact-r11.jsonl"]);

export function examplesOf(cases: ReadonlyArray<Sourced<RedactCase>>): Example[] {
  const examples: Example[] = [];
  const shipped = nameTagger();
  useNameTagger(null);
  for (const c of cases) {
    if (NOT_FOR_THE_TAGGER.has(c.source)) continue;
    const names = occurrences(
      c.text,
      c.identifiers.filter((i) => i.kind === "name").map((i) => i.value),
    );
    const others = occurrences(
      c.text,
      c.identifiers.filter((i) => i.kind !== "name").map((i) => i.value),
    );
    const keeps = occurrences(c.text, c.keep);
    const tokens = tokenize(c.text);
    // What the rules claim, the tagger never sees: the examples are the words it will be asked about.
    const spans = findIdentifiers(c.text);
    const claimed = spans.map((span): [number, number] => [span.start, span.end]);
    // One example: the word `words[k]`, which lies at [start, end) of the case's own text.
    const learn = (words: readonly Token[], k: number, start: number, end: number, asked: boolean, where: string) => {
      const name = inside(names, start, end);
      if (!name && inside(others, start, end)) return;
      examples.push({
        indices: Uint32Array.from(tokenFeatures(words, k, settings.bits, taggerStanding, taggerMedical)),
        name,
        writer: c.source,
        asked,
        weight: !name && inside(keeps, start, end) ? settings.keepWeight : 1,
        group: candidateGroup(words, k, taggerStanding),
        where: `${c.id} ${where}`,
      });
    };
    tokens.forEach((token, k) => {
      if (!isTaggerCandidate(token)) return;
      // Every candidate teaches the tagger, but only those it is asked about at run time set its
      // threshold: scored, and not claimed by the rules.
      const asked = isTaggerScored(token) && !inside(claimed, token.start, token.end);
      learn(tokens, k, token.start, token.end, asked, token.text);
    });
    // The tagger is asked again once a pass has put placeholders in, about the words beside them
    // ("[NAME] Okeke", "Dallas [NAME]"): those words are examples in that context too.
    const later = afterOnePass(c.text, spans);
    const laterTokens = tokenize(later.text);
    laterTokens.forEach((token, k) => {
      if (!isTaggerCandidate(token)) return;
      const near =
        PLACEHOLDER_NEAR_BEFORE.test(later.text.slice(Math.max(0, token.start - 24), token.start)) ||
        PLACEHOLDER_NEAR_AFTER.test(later.text.slice(token.end, token.end + 24));
      const at = near ? originOf(later.pieces, token.start, token.end) : undefined;
      if (at === undefined) return;
      learn(laterTokens, k, at, at + token.end - token.start, isTaggerScored(token), `${token.text} (after a pass)`);
    });
  }
  useNameTagger(shipped);
  return examples;
}

/**
 * The text as a later pass reads it (`replaceSpans`, as `redact` makes it), and for each piece of
 * text left between placeholders: where it starts in the output and in the original, and its length.
 */
function afterOnePass(text: string, spans: readonly IdentifierSpan[]): { text: string; pieces: number[][] } {
  const { text: out, placed } = replaceSpans(text, spans);
  const pieces = [...spans, undefined].map((span, i) => {
    const previous = spans[i - 1];
    const outStart = previous === undefined ? 0 : (placed[i - 1] ?? 0) + placeholder(previous.kind).length;
    const origStart = previous?.end ?? 0;
    return [outStart, origStart, (span?.start ?? text.length) - origStart];
  });
  return { text: out, pieces };
}

/** Where `[start, end)` of a later pass's text was in the original, if it lies in one piece. */
function originOf(pieces: readonly number[][], start: number, end: number): number | undefined {
  for (const [outStart = 0, origStart = 0, length = 0] of pieces) {
    if (start >= outStart && end <= outStart + length) return origStart + start - outStart;
  }
  return undefined;
}

const PLACEHOLDER_NEAR_BEFORE = /\[[A-Z_]+\][^\p{L}\n]{0,4}$/u;
const PLACEHOLDER_NEAR_AFTER = /^[^\p{L}\n]{0,4}\[[A-Z_]+\]/u;

/** The trainer's view of an example (`logistic.ts`): a look-alike a writer listed counts more. */
const nameSample = (example: Example): Sample => ({
  indices: example.indices,
  positive: example.name,
  weight: example.weight,
});

export function train(examples: readonly Example[]): Logistic {
  return trainLogistic(examples, nameSample, settings);
}

/** Out-of-writer scores: each writer's examples scored by a model trained on everyone else's. */
export function crossValidate(examples: readonly Example[]): number[] {
  return crossValidateLogistic(examples, nameSample, settings);
}

const pct = (n: number) => `${(n * 100).toFixed(1)}%`;

/** What the shipped tagger must have been trained from: the redaction corpus, vocabulary, sources and settings. */
export function nameModelVersion(): string {
  const hash = createHash("sha256");
  hashTrainingFiles(hash, "redact");
  hash.update(readFileSync(vocabPath));
  // The rules decide which words the tagger learns its threshold from, so they version it too;
  // and so does this trainer.
  const core = new URL("../../core/", import.meta.url);
  const safety = readdirSync(new URL("safety/", core)).filter((file) => file.endsWith(".ts"));
  for (const source of ["redact.ts", ...safety.sort().map((file) => `safety/${file}`)]) {
    hash.update(source).update(readFileSync(new URL(source, core)));
  }
  hash.update(readFileSync(new URL(import.meta.url)));
  hash.update(JSON.stringify(settings));
  return hash.digest("hex").slice(0, 16);
}

/**
 * How many out-of-writer false names the threshold may let through: a share of every candidate
 * word that is no name, asked or not, so that leaving easy words unscored does not tighten it.
 */
export function falseBudget(examples: readonly Example[]): number {
  return Math.floor((examples.filter((e) => !e.name).length * settings.maxFalsePerThousand) / 1000);
}

/** The lowest threshold at which fewer than the budget of out-of-writer non-name words are taken. */
export function thresholdOf(examples: readonly Example[], scores: readonly number[]): number {
  const negatives = scores.filter((_, i) => examples[i]?.asked && !examples[i]?.name).sort((a, b) => b - a);
  return (negatives[falseBudget(examples)] ?? Number.NEGATIVE_INFINITY) + 1e-6;
}

/**
 * A group's scores calibrated (Platt scaling): the probability that a word scored `s` is a name is
 * read as sigmoid(a·s + b), fitted by Newton's method to the group's out-of-writer scores.
 */
function calibrate(points: ReadonlyArray<{ s: number; name: boolean }>): readonly [number, number] {
  let a = 1;
  let b = 0;
  for (let iteration = 0; iteration < 100; iteration++) {
    let ga = 0;
    let gb = 0;
    // A small ridge keeps the step finite when a group is nearly separable.
    let haa = 1e-3;
    let hab = 0;
    let hbb = 1e-3;
    for (const { s, name } of points) {
      const p = 1 / (1 + Math.exp(-(a * s + b)));
      const error = p - (name ? 1 : 0);
      const w = p * (1 - p);
      ga += error * s;
      gb += error;
      haa += w * s * s;
      hab += w * s;
      hbb += w;
    }
    const det = haa * hbb - hab * hab;
    const da = (hbb * ga - hab * gb) / det;
    const db = (haa * gb - hab * ga) / det;
    a -= da;
    b -= db;
    if (Math.abs(da) + Math.abs(db) < 1e-9) break;
  }
  return [a, b];
}

/**
 * Thresholds per candidate group that spend the same budget of false names: each group's scores
 * are calibrated into the probability that a word is a name (`calibrate`), and one probability,
 * the lowest that keeps out-of-writer false names within the budget, is every group's cut. A word
 * is taken where it is as likely a name as anywhere else, so a few words' scores moving cannot
 * pour the budget from one group into another (the greedy split this replaces moved a group's
 * threshold by 0.8 between two retrainings a rule apart; these move by 0.05). A group with too
 * few examples to calibrate keeps the shared threshold.
 */
export function groupThresholdsOf(examples: readonly Example[], scores: readonly number[], shared: number): number[] {
  const asked = examples.map((e, i) => ({ e, s: scores[i] ?? 0 })).filter(({ e }) => e.asked);
  const budget = falseBudget(examples);
  const groups = Array.from({ length: CANDIDATE_GROUPS }, (_, g) =>
    asked.filter(({ e }) => e.group === g).map(({ e, s }) => ({ s, name: e.name })),
  );
  const small = (points: ReadonlyArray<{ name: boolean }>) =>
    points.filter((point) => !point.name).length < settings.minGroupNegatives;
  const fits = groups.map((points) => (small(points) ? null : calibrate(points)));
  const cutsAt = (logit: number) => fits.map((fit) => (fit === null ? shared : (logit - fit[1]) / fit[0]));
  const falseAt = (cuts: readonly number[]) =>
    groups.reduce((sum, points, g) => sum + points.filter((p) => !p.name && p.s >= (cuts[g] ?? shared)).length, 0);
  // The lowest probability (as log-odds) whose cuts stay within the budget: false names only fall as it rises.
  let low = -30;
  let high = 30;
  for (let step = 0; step < 80; step++) {
    const middle = (low + high) / 2;
    if (falseAt(cutsAt(middle)) > budget) low = middle;
    else high = middle;
  }
  const cuts = cutsAt(high);
  // Never worse than one threshold for all: that is a way of spending the same budget too.
  const found = (all: readonly number[]) =>
    groups.reduce((sum, points, g) => sum + points.filter((p) => p.name && p.s >= (all[g] ?? shared)).length, 0);
  return found(cuts) < found(groups.map(() => shared)) ? groups.map(() => shared) : cuts;
}

/** A tagger trained on `examples`, its threshold from one writer held out at a time among them. */
export function taggerFrom(examples: readonly Example[]): NameTagger {
  const scores = crossValidate(examples);
  const threshold = thresholdOf(examples, scores);
  const groupThresholds = settings.perGroup ? groupThresholdsOf(examples, scores, threshold) : undefined;
  return new NameTagger(
    modelFile(examples, threshold, groupThresholds, {
      version: "in-memory",
      trainedOn: { cases: 0, tokens: examples.length, names: examples.filter((e) => e.name).length },
      crossValidation: {},
    }),
  );
}

/** Weights trained on all of `examples`, with the thresholds chosen for them, as a model file. */
function modelFile(
  examples: readonly Example[],
  threshold: number,
  groupThresholds: number[] | undefined,
  about: Pick<NameModelFile, "version" | "trainedOn" | "crossValidation">,
): NameModelFile {
  const model = train(examples);
  const table = encodeWeights(model.weights);
  return {
    format: 1,
    version: about.version,
    bits: settings.bits,
    bias: model.bias,
    threshold,
    ...(groupThresholds === undefined ? {} : { groupThresholds }),
    scale: table.scale,
    weights: table.weights,
    trainedOn: about.trainedOn,
    crossValidation: about.crossValidation,
  };
}

function main(): void {
  const cases = redactCases("train");
  const examples = examplesOf(cases);
  const names = examples.filter((e) => e.name).length;
  console.log(
    `Name tagger: ${examples.length} candidate words (${names} in names) from ${new Set(examples.map((e) => e.writer)).size} writers (of ${new Set(cases.map((c) => c.source)).size}; see NOT_FOR_THE_TAGGER)`,
  );
  const scores = crossValidate(examples);
  // Measured on the words the tagger is asked about at run time: the rules took the others.
  const negatives = scores.filter((_, i) => examples[i]?.asked && !examples[i]?.name).sort((a, b) => b - a);
  const positives = scores.filter((_, i) => examples[i]?.asked && examples[i]?.name);
  // The lowest threshold that keeps false names under the budget.
  const threshold = thresholdOf(examples, scores);
  const allowed = negatives.filter((s) => s >= threshold).length;
  const recall = positives.filter((s) => s >= threshold).length / positives.length;
  console.log(
    `  one writer held out, on the ${positives.length + negatives.length} words left by the rules: at threshold ${threshold.toFixed(3)}, ${pct(recall)} of name words found, ${allowed} of ${negatives.length} other words taken (${settings.maxFalsePerThousand}‰ of all ${examples.filter((e) => !e.name).length} candidate words that are no name)`,
  );
  const atBudget = [1, 2, 4, 8].map((perThousand) => {
    const cut = (negatives[Math.floor((negatives.length * perThousand) / 1000)] ?? 0) + 1e-6;
    return `${perThousand}‰ ${pct(positives.filter((s) => s >= cut).length / positives.length)}`;
  });
  console.log(`    name words found with a budget of false ones (of the words asked) of ${atBudget.join(", ")}`);
  for (const t of [-1, 0, 1, 2, 3]) {
    const r = positives.filter((s) => s >= t).length / positives.length;
    const f = negatives.filter((s) => s >= t).length;
    console.log(
      `    at ${t}: name words ${pct(r)}, other words taken ${f} (${((f / negatives.length) * 1000).toFixed(1)}‰)`,
    );
  }
  const groupThresholds = settings.perGroup ? groupThresholdsOf(examples, scores, threshold) : undefined;
  let groupRecall = recall;
  if (groupThresholds !== undefined) {
    const asked = examples.map((e, i) => ({ e, s: scores[i] ?? 0 })).filter(({ e }) => e.asked);
    const taken = ({ e, s }: { e: Example; s: number }) => s >= (groupThresholds[e.group] ?? threshold);
    const falseOnes = asked.filter((x) => !x.e.name && taken(x)).length;
    groupRecall = asked.filter((x) => x.e.name && taken(x)).length / positives.length;
    console.log(
      `  with a threshold per candidate group: ${pct(groupRecall)} of name words found, ${falseOnes} other words taken`,
    );
    const labels = ["lower", "capitalised", "capitals", "no case"];
    groupThresholds.forEach((t, g) => {
      const mine = asked.filter(({ e }) => e.group === g);
      const label = `${labels[g >> 1]}, ${g % 2 === 0 ? "listed name" : "unlisted"}`;
      console.log(
        `    ${label.padEnd(24)} threshold ${t.toFixed(3).padStart(7)}: ${mine.filter((x) => x.e.name && taken(x)).length}/${mine.filter((x) => x.e.name).length} name words, ${mine.filter((x) => !x.e.name && taken(x)).length}/${mine.filter((x) => !x.e.name).length} other words taken`,
      );
    });
  }
  if (process.argv.includes("--errors")) {
    const asked = examples.map((e, i) => ({ e, s: scores[i] ?? 0 })).filter(({ e }) => e.asked);
    console.log("  highest-scored words that are no name:");
    for (const { e, s } of asked
      .filter(({ e }) => !e.name)
      .sort((a, b) => b.s - a.s)
      .slice(0, 40))
      console.log(`    ${s.toFixed(2)} ${e.where}`);
    console.log("  names missed:");
    for (const { e, s } of asked.filter(({ e, s }) => e.name && s < threshold).slice(0, 400))
      console.log(`    ${s.toFixed(2)} ${e.where}`);
  }
  if (process.argv.includes("--cv") || process.argv.includes("--errors")) return;

  const file = modelFile(examples, threshold, groupThresholds, {
    version: nameModelVersion(),
    trainedOn: { cases: cases.length, tokens: examples.length, names },
    crossValidation: { nameWordRecall: groupRecall, falsePerThousand: settings.maxFalsePerThousand },
  });
  // Loads as the shipped model would, so a bad table fails here and not at run time.
  new NameTagger(file);
  writeFileSync(nameModelPath, `${JSON.stringify(file, null, 1)}\n`);
  console.log(`Wrote ${nameModelPath} (version ${file.version})`);
}

if (import.meta.main) main();
