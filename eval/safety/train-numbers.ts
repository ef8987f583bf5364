/**
 * Trains the number tagger (`core/safety/number-model.json`, see `core/safety/number-tagger.ts`)
 * on the training part of the redaction corpus, `eval/safety/train/redact*.jsonl`. The held-back
 * part is never read here. Run after `train-names.ts`: what the name tagger claims, this one is
 * not asked about.
 *
 *   bun eval/safety/train-numbers.ts           train, cross-validate, write the model
 *   bun eval/safety/train-numbers.ts --cv      cross-validate only, write nothing
 *   bun eval/safety/train-numbers.ts --errors  cross-validate, and list the out-of-writer errors
 *
 * The examples are candidate tokens (`numberCandidates`), positive when they lie in one of the
 * case's labelled identifiers, of any kind: those the tagger is asked about, in the text the rules
 * leave (redacted without the tagger: "[NAME] 0044-7712-9 [DATE]"), and those a rule claims, in
 * the text as written, which teach what stands around an identifier. A negative inside one of the
 * case's keep strings counts `keepWeight` times: writers list there the look-alikes a builder's
 * prompt must keep. Logistic regression by AdaGrad, as for the name tagger. The threshold comes from
 * cross-validation with one writer's file held out at a time, measured on the tokens the tagger is
 * asked about at run time (left by every rule): the lowest score at which out-of-writer tokens
 * that are no identifier are taken fewer than `maxFalsePerThousand` times in a thousand.
 *
 * Deterministic: the same corpus, rules and settings give the same bytes.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { findIdentifiers, redact } from "../../core/redact.ts";
import { encodeWeights } from "../../core/safety/model.ts";
import { nameModelPath } from "../../core/safety/name-tagger.ts";
import {
  type NumberModelFile,
  NumberTagger,
  numberCandidates,
  numberFeatures,
  numberModelPath,
  numberTagger,
  useNumberTagger,
} from "../../core/safety/number-tagger.ts";
import { vocabPath } from "../../core/safety/vocab.ts";
import { hashTrainingFiles, type RedactCase, redactCases, type Sourced } from "./corpus.ts";
import { crossValidateLogistic, type Logistic, type LogisticSettings, type Sample, trainLogistic } from "./logistic.ts";
import { inside, occurrences } from "./train-names.ts";

const defaults = {
  bits: 16,
  epochs: 15,
  learningRate: 0.1,
  l2: 1e-6,
  /** Out-of-writer tokens wrongly taken, per thousand of the asked tokens that are no identifier. */
  maxFalsePerThousand: 1,
  seed: 20261124,
  keepWeight: 4,
};
const settings: typeof defaults = { ...defaults, ...JSON.parse(process.env.NUMBER_TRAIN_SETTINGS ?? "{}") };

export interface NumberExample {
  indices: Uint32Array;
  positive: boolean;
  writer: string;
  /** Whether the tagger is asked about the token at run time: no rule claimed it. */
  asked: boolean;
  weight: number;
  /** Whether it lies in one of the case's keep strings (and is no identifier). */
  kept: boolean;
  /** The case and the token, for reading what the tagger gets wrong. */
  where: string;
}

export function numberExamplesOf(cases: ReadonlyArray<Sourced<RedactCase>>): NumberExample[] {
  const examples: NumberExample[] = [];
  const shipped = numberTagger();
  useNumberTagger(null);
  for (const c of cases) {
    const values = c.identifiers.map((i) => i.value);
    // The candidates of one text: `asked`, those the tagger is asked about, or those a rule claims.
    const learn = (text: string, asked: boolean) => {
      const identifiers = occurrences(text, values);
      const keeps = occurrences(text, c.keep);
      const claimed = asked ? [] : findIdentifiers(text).map((span): [number, number] => [span.start, span.end]);
      for (const { start, end } of numberCandidates(text)) {
        if (!asked && !inside(claimed, start, end)) continue;
        const token = text.slice(start, end);
        // In the text the rules left, a value they redacted in part is still someone's: "[ADDRESS] 60623".
        const positive =
          inside(identifiers, start, end) ||
          (asked && /\d{3}/.test(token) && values.some((value) => value.includes(token)));
        const kept = !positive && inside(keeps, start, end);
        examples.push({
          indices: Uint32Array.from(numberFeatures(text, start, end, settings.bits)),
          positive,
          writer: c.source,
          asked,
          weight: kept ? settings.keepWeight : 1,
          kept,
          where: `${c.id} ${token}${asked ? "" : " (claimed)"}`,
        });
      }
    };
    // The tokens a rule claims, in the text as written: they teach what is around an identifier.
    learn(c.text, false);
    // The tokens the tagger is asked about: what the rules leave, in the text they leave.
    learn(redact(c.text), true);
  }
  useNumberTagger(shipped);
  return examples;
}

/** The trainer's view of an example (`logistic.ts`). */
const numberSample = (example: NumberExample): Sample => example;

/** The bias learns at the weights' rate. */
const logisticSettings = (): LogisticSettings => ({ ...settings, biasLearningRate: settings.learningRate });

function train(examples: readonly NumberExample[]): Logistic {
  return trainLogistic(examples, numberSample, logisticSettings());
}

function crossValidate(examples: readonly NumberExample[]): number[] {
  return crossValidateLogistic(examples, numberSample, logisticSettings());
}

/** The lowest threshold at which fewer than the budget of asked, out-of-writer non-identifiers are taken. */
function thresholdOf(examples: readonly NumberExample[], scores: readonly number[]): number {
  const negatives = scores.filter((_, i) => examples[i]?.asked && !examples[i]?.positive).sort((a, b) => b - a);
  const budget = Math.floor((negatives.length * settings.maxFalsePerThousand) / 1000);
  return (negatives[budget] ?? Number.NEGATIVE_INFINITY) + 1e-6;
}

function modelFile(
  examples: readonly NumberExample[],
  threshold: number,
  about: Pick<NumberModelFile, "version" | "trainedOn" | "crossValidation">,
): NumberModelFile {
  const model = train(examples);
  const table = encodeWeights(model.weights);
  return { format: 1, ...about, bits: settings.bits, bias: model.bias, threshold, ...table };
}

/** A tagger trained on `examples`, its threshold from one writer held out at a time among them. */
export function numberTaggerFrom(examples: readonly NumberExample[]): NumberTagger {
  const threshold = thresholdOf(examples, crossValidate(examples));
  return new NumberTagger(
    modelFile(examples, threshold, {
      version: "in-memory",
      trainedOn: { cases: 0, candidates: examples.length, identifiers: 0 },
      crossValidation: {},
    }),
  );
}

/** What the shipped tagger must have been trained from: the corpus, the rules, the name tagger and the settings. */
export function numberModelVersion(): string {
  const hash = createHash("sha256");
  hashTrainingFiles(hash, "redact");
  hash.update(readFileSync(vocabPath)).update(readFileSync(nameModelPath));
  const core = new URL("../../core/", import.meta.url);
  const safety = readdirSync(new URL("safety/", core)).filter((file) => file.endsWith(".ts"));
  for (const source of ["redact.ts", ...safety.sort().map((file) => `safety/${file}`)]) {
    hash.update(source).update(readFileSync(new URL(source, core)));
  }
  // And this trainer: a change to how it learns is a new model.
  hash.update(readFileSync(new URL(import.meta.url)));
  hash.update(JSON.stringify(settings));
  return hash.digest("hex").slice(0, 16);
}

const pct = (n: number) => `${(n * 100).toFixed(1)}%`;

function main(): void {
  const cases = redactCases("train");
  const examples = numberExamplesOf(cases);
  const scores = crossValidate(examples);
  const asked = examples.map((e, i) => ({ e, s: scores[i] ?? 0 })).filter(({ e }) => e.asked);
  const positives = asked.filter(({ e }) => e.positive);
  const negatives = asked.filter(({ e }) => !e.positive);
  const threshold = thresholdOf(examples, scores);
  const found = positives.filter(({ s }) => s >= threshold).length;
  const taken = negatives.filter(({ s }) => s >= threshold);
  console.log(
    `Number tagger: ${examples.length} candidate tokens (${examples.filter((e) => e.positive).length} in identifiers) from ${new Set(examples.map((e) => e.writer)).size} writers`,
  );
  console.log(
    `  one writer held out, on the ${asked.length} tokens left by the rules: at threshold ${threshold.toFixed(3)}, ${found}/${positives.length} (${pct(found / Math.max(1, positives.length))}) in identifiers taken, ${taken.length}/${negatives.length} others taken (${taken.filter(({ e }) => e.kept).length} in keep strings)`,
  );
  for (const t of [0, 1, 2, 3, 4, 5]) {
    const tp = positives.filter(({ s }) => s >= t).length;
    const fp = negatives.filter(({ s }) => s >= t);
    console.log(
      `    at ${t}: ${tp} in identifiers, ${fp.length} others (${fp.filter(({ e }) => e.kept).length} kept strings)`,
    );
  }
  if (process.argv.includes("--errors")) {
    for (const { e, s } of asked.filter(({ s }) => s >= Math.min(threshold, 2)).sort((a, b) => b.s - a.s))
      console.log(`    ${e.positive ? "found" : e.kept ? "KEEP " : "other"} ${s.toFixed(2)} ${e.where}`);
  }
  const claimedPositives = examples.map((e, i) => ({ e, s: scores[i] ?? 0 })).filter(({ e }) => !e.asked && e.positive);
  console.log(
    `  tokens a rule claims that are in identifiers, scored out of writer: ${claimedPositives.filter(({ s }) => s >= threshold).length}/${claimedPositives.length} at the threshold`,
  );
  if (process.argv.includes("--missed")) {
    for (const { e, s } of positives.filter(({ s }) => s < threshold))
      console.log(`    missed ${s.toFixed(2)} ${e.where}`);
  }
  if (process.argv.includes("--cv") || process.argv.includes("--errors") || process.argv.includes("--missed")) return;
  const file = modelFile(examples, threshold, {
    version: numberModelVersion(),
    trainedOn: {
      cases: cases.length,
      candidates: examples.length,
      identifiers: examples.filter((e) => e.positive).length,
    },
    crossValidation: { found: found / Math.max(1, positives.length), falsePerThousand: settings.maxFalsePerThousand },
  });
  // Loads as the shipped model would, so a bad table fails here and not at run time.
  new NumberTagger(file);
  writeFileSync(numberModelPath, `${JSON.stringify(file, null, 1)}\n`);
  console.log(`Wrote ${numberModelPath} (version ${file.version})`);
}

if (import.meta.main) main();
