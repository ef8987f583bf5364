/**
 * Trains the clinical-advice model (`core/safety/model.json`) from the training part of the
 * corpus, `eval/safety/train/`. The held-back part is never read here.
 *
 *   bun eval/safety/train.ts              train, cross-validate, write the model
 *   bun eval/safety/train.ts --cv         cross-validate only (for trying settings), write nothing
 *   bun eval/safety/train.ts --cv --misses [--at <score>]   and list what cross-validation got wrong
 *
 * Deterministic: the same corpus, vocabulary and settings give the same bytes (seeded shuffles,
 * no clock, no parallelism). The model's `version` is a hash of exactly those inputs, so the
 * evaluation can tell a model that is stale against its corpus.
 *
 * Method: logistic regression over the hashed features of `core/safety/features.ts`, fitted by
 * AdaGrad (per-feature step sizes, which suit sparse text features) with small steps, which
 * regularise more than the L2 term does; the bias gets larger steps so it can find the base rate.
 * The decision threshold comes from cross-validation with one writer's file held out at a time
 * (every corpus file is one writer's work): a model meeting a prompt from a writer it never saw is
 * what the held-back part measures, and 5-fold cross-validation over mixed writers flatters it.
 * The threshold is the highest that keeps `targetRecall` of those out-of-writer clinical scores.
 *
 * What was tried and not kept (5-fold and by-writer cross-validation on this corpus): scoring a
 * prompt by its best sentence (multiple-instance learning), or by its last two sentences as well,
 * a hidden layer (fastText with 16 to 32 units), an ensemble of both, stacking positive and
 * negative evidence separately. Each moved builder pass at 99% recall by under a point.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { ruleVerdict } from "../../core/classify.ts";
import { redact } from "../../core/redact.ts";
import { blockedCategories } from "../../core/safety/categories.ts";
import { FeatureExtractor } from "../../core/safety/features.ts";
import { fold } from "../../core/safety/fold.ts";
import { encodeWeights, type ModelFile, modelPath } from "../../core/safety/model.ts";
import { nameModelPath } from "../../core/safety/name-tagger.ts";
import { numberModelPath } from "../../core/safety/number-tagger.ts";
import { vocab, vocabPath } from "../../core/safety/vocab.ts";
import { type ClassifyCase, classifyCases, hashTrainingFiles, type Sourced } from "./corpus.ts";
import { type Logistic, type Sample, scoreLogistic, trainLogistic } from "./logistic.ts";
import { random, shuffled } from "./random.ts";

const defaults = {
  bits: 18,
  categoryBits: 13,
  epochs: 60,
  learningRate: 0.01,
  /** The bias moves faster than the weights: with AdaGrad's small steps it would stay near 0. */
  biasLearningRate: 0.3,
  l2: 1e-6,
  categoryEpochs: 30,
  categoryLearningRate: 0.3,
  folds: 5,
  targetRecall: 0.97,
  seed: 20261124,
};

/** `SAFETY_TRAIN_SETTINGS='{"epochs":30}'` overrides settings, for trying them with `--cv`. */
const settings: typeof defaults = { ...defaults, ...JSON.parse(process.env.SAFETY_TRAIN_SETTINGS ?? "{}") };

interface Example {
  /** Indices of the prompt's features in the binary model's table. */
  indices: Uint32Array;
  /** Word-level feature hashes, for the category model. */
  words: Uint32Array;
  clinical: boolean;
  /** Index into `blockedCategories`, or -1 for a builder case. */
  category: number;
  /** The file the case comes from: one writer's work. */
  writer: string;
  /** What the hard rules say before the model, if anything. */
  rule: "clinical" | "builder" | null;
}

/** The binary model's view of an example (`logistic.ts`): every prompt counts once. */
const binarySample = (example: Example): Sample => ({
  indices: example.indices,
  positive: example.clinical,
  weight: 1,
});

function trainBinary(examples: readonly Example[]): Logistic {
  return trainLogistic(examples, binarySample, settings);
}

interface Multinomial {
  weights: Float64Array;
  biases: Float64Array;
}

function trainCategories(examples: readonly Example[]): Multinomial {
  const labels = blockedCategories.length;
  const size = 1 << settings.categoryBits;
  const mask = size - 1;
  const weights = new Float64Array(labels * size);
  const squares = new Float64Array(labels * size).fill(1e-8);
  const biases = new Float64Array(labels);
  const biasSquares = new Float64Array(labels).fill(1e-8);
  const scores = new Float64Array(labels);
  const next = random(settings.seed + 1);
  for (let epoch = 0; epoch < settings.categoryEpochs; epoch++) {
    for (const example of shuffled(examples, next)) {
      let max = Number.NEGATIVE_INFINITY;
      for (let k = 0; k < labels; k++) {
        let z = biases[k] ?? 0;
        for (const h of example.words) z += weights[k * size + (h & mask)] ?? 0;
        scores[k] = z;
        max = Math.max(max, z);
      }
      let total = 0;
      for (let k = 0; k < labels; k++) {
        scores[k] = Math.exp((scores[k] ?? 0) - max);
        total += scores[k] ?? 0;
      }
      for (let k = 0; k < labels; k++) {
        const g = (scores[k] ?? 0) / total - (k === example.category ? 1 : 0);
        for (const h of example.words) {
          const at = k * size + (h & mask);
          const w = weights[at] ?? 0;
          const grad = g + settings.l2 * w;
          squares[at] = (squares[at] ?? 0) + grad * grad;
          weights[at] = w - (settings.categoryLearningRate * grad) / Math.sqrt(squares[at] ?? 1);
        }
        biasSquares[k] = (biasSquares[k] ?? 0) + g * g;
        biases[k] = (biases[k] ?? 0) - (settings.categoryLearningRate * g) / Math.sqrt(biasSquares[k] ?? 1);
      }
    }
  }
  return { weights, biases };
}

function categoryOf(model: Multinomial, example: Example): number {
  const size = 1 << settings.categoryBits;
  let best = 0;
  let bestScore = Number.NEGATIVE_INFINITY;
  for (let k = 0; k < blockedCategories.length; k++) {
    let z = model.biases[k] ?? 0;
    for (const h of example.words) z += model.weights[k * size + (h & (size - 1))] ?? 0;
    if (z > bestScore) {
      bestScore = z;
      best = k;
    }
  }
  return best;
}

/**
 * A score that says what the hard rules decided before the model (`ruleVerdict`): a clinical
 * rule's block is above any threshold, a quiet prompt below any.
 */
const RULED_CLINICAL = Number.POSITIVE_INFINITY;
const RULED_BUILDER = Number.NEGATIVE_INFINITY;

/** Builder pass when the threshold keeps `recall` of the clinical scores, and that threshold. */
function operatingPoint(clinical: readonly number[], builder: readonly number[], recall: number) {
  const sorted = [...clinical].sort((a, b) => a - b);
  const at = sorted[Math.floor(sorted.length * (1 - recall))] ?? 0;
  // Ruled cases cannot move the threshold: it is the lowest score the model has to reach itself.
  const threshold = Number.isFinite(at) ? at : (sorted.find((s) => Number.isFinite(s)) ?? 0);
  return { threshold, builderPass: builder.filter((s) => s < threshold).length / builder.length };
}

interface CrossValidation {
  /** Out-of-fold score of each example. */
  scores: Float64Array;
  clinical: number[];
  builder: number[];
  categoryAccuracy: number;
}

/** Out-of-fold scores, with folds either random (`by: "fold"`) or one writer each (`by: "writer"`). */
function crossValidate(examples: readonly Example[], by: "fold" | "writer"): CrossValidation {
  const order = shuffled(
    examples.map((_, i) => i),
    random(settings.seed + 2),
  );
  const writers = [...new Set(examples.map((e) => e.writer))].sort();
  const folds = by === "fold" ? settings.folds : writers.length;
  const foldOf = new Int32Array(examples.length);
  order.forEach((i, position) => {
    foldOf[i] = by === "fold" ? position % folds : writers.indexOf((examples[i] as Example).writer);
  });
  const scores = new Float64Array(examples.length);
  let categoryHits = 0;
  let categoryTotal = 0;
  for (let fold = 0; fold < folds; fold++) {
    const training = examples.filter((_, i) => foldOf[i] !== fold);
    const binary = trainBinary(training);
    const categories = trainCategories(training.filter((e) => e.clinical));
    examples.forEach((example, i) => {
      if (foldOf[i] !== fold) return;
      scores[i] = scoreLogistic(binary, example.indices);
      if (example.clinical) {
        categoryTotal++;
        if (categoryOf(categories, example) === example.category) categoryHits++;
      }
    });
  }
  // The decision is rules, then the model: ruled cases take their rule's side.
  examples.forEach((example, i) => {
    if (example.rule === "clinical") scores[i] = RULED_CLINICAL;
    else if (example.rule === "builder") scores[i] = RULED_BUILDER;
  });
  return {
    scores,
    clinical: examples.flatMap((e, i) => (e.clinical ? [scores[i] ?? 0] : [])),
    builder: examples.flatMap((e, i) => (e.clinical ? [] : [scores[i] ?? 0])),
    categoryAccuracy: categoryHits / Math.max(1, categoryTotal),
  };
}

/** Hash of everything the model depends on: corpus, vocabulary, feature code and settings. */
export function currentVersion(): string {
  const hash = createHash("sha256");
  hashTrainingFiles(hash);
  hash.update(readFileSync(vocabPath));
  // Redaction reads the name tagger's weights too.
  if (existsSync(nameModelPath)) hash.update(readFileSync(nameModelPath));
  if (existsSync(numberModelPath)) hash.update(readFileSync(numberModelPath));
  // The features, and what the text goes through before them: redaction and the hard rules.
  const core = new URL("../../core/", import.meta.url);
  const safety = readdirSync(new URL("safety/", core)).filter((file) => file.endsWith(".ts"));
  for (const source of ["redact.ts", "classify.ts", ...safety.sort().map((file) => `safety/${file}`)]) {
    hash.update(source).update(readFileSync(new URL(source, core)));
  }
  // And this trainer: a change to how it learns is a new model.
  hash.update(readFileSync(new URL(import.meta.url)));
  hash.update(JSON.stringify(settings));
  return hash.digest("hex").slice(0, 16);
}

function examplesOf(cases: ReadonlyArray<Sourced<ClassifyCase>>): Example[] {
  const extractor = new FeatureExtractor(settings.bits, vocab(), settings.categoryBits);
  return cases.map((c) => {
    // Redacted, as the safety gate sees prompts (`core/safety/inspect.ts`).
    const text = fold(redact(c.text));
    const features = extractor.extract(text);
    const rule = ruleVerdict(text);
    return {
      indices: Uint32Array.from(features.indices),
      words: Uint32Array.from(features.words),
      clinical: c.label === "clinical",
      category: c.label === "clinical" ? blockedCategories.indexOf(c.category) : -1,
      writer: c.source,
      rule: rule === null ? null : rule === "builder" ? "builder" : "clinical",
    };
  });
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

function report(name: string, cv: CrossValidation): void {
  const points = [0.95, 0.97, 0.98, 0.99, 0.995].map((recall) => {
    const point = operatingPoint(cv.clinical, cv.builder, recall);
    return `${pct(recall)} → ${pct(point.builderPass)} (${point.threshold.toFixed(2)})`;
  });
  console.log(
    `  ${name}: builder pass at clinical recall ${points.join(", ")}; category right ${pct(cv.categoryAccuracy)}`,
  );
}

function main(): void {
  const cases = classifyCases("train");
  const examples = examplesOf(cases);
  const clinicalCount = examples.filter((e) => e.clinical).length;
  const writers = new Set(examples.map((e) => e.writer)).size;
  console.log(
    `Training cases: ${examples.length} (${clinicalCount} clinical, ${examples.length - clinicalCount} builder) from ${writers} writers`,
  );
  const ruled = (kind: "clinical" | "builder", clinical: boolean) =>
    examples.filter((e) => e.rule === kind && e.clinical === clinical).length;
  console.log(
    `  hard rules: ${ruled("clinical", true)} clinical and ${ruled("clinical", false)} builder cases blocked; ${ruled("builder", false)} builder and ${ruled("builder", true)} clinical cases passed as quiet`,
  );

  const mixed = crossValidate(examples, "fold");
  report(`${settings.folds}-fold cross-validation`, mixed);
  const byWriter = crossValidate(examples, "writer");
  report("one writer held out at a time", byWriter);
  const chosen = operatingPoint(byWriter.clinical, byWriter.builder, settings.targetRecall);
  console.log(
    `  threshold ${chosen.threshold.toFixed(3)} (clinical recall ${pct(settings.targetRecall)} with a writer held out)`,
  );

  if (process.argv.includes("--misses")) {
    const at = process.argv.includes("--at")
      ? Number(process.argv[process.argv.indexOf("--at") + 1])
      : chosen.threshold;
    cases.forEach((c, i) => {
      const score = byWriter.scores[i] ?? 0;
      if (!Number.isFinite(score) && process.argv.includes("--unruled")) return;
      if (c.label === "clinical" ? score < at : score >= at)
        console.log(`  ${c.label} ${c.category} ${score.toFixed(2)}: ${c.text.slice(0, 160).replace(/\n/g, " ")}`);
    });
  }
  if (process.argv.includes("--cv")) return;

  const binary = trainBinary(examples);
  const categories = trainCategories(examples.filter((e) => e.clinical));
  const mixedPoint = operatingPoint(mixed.clinical, mixed.builder, settings.targetRecall);
  const model: ModelFile = {
    format: 1,
    version: currentVersion(),
    trainedOn: { cases: examples.length, clinical: clinicalCount, builder: examples.length - clinicalCount },
    settings,
    crossValidation: {
      targetRecall: settings.targetRecall,
      builderPassByWriter: chosen.builderPass,
      builderPassMixed: operatingPoint(mixed.clinical, mixed.builder, settings.targetRecall).builderPass,
      recallAtThresholdMixed: mixed.clinical.filter((s) => s >= chosen.threshold).length / mixed.clinical.length,
      builderPassAtThresholdMixed: mixed.builder.filter((s) => s < chosen.threshold).length / mixed.builder.length,
      categoryAccuracy: byWriter.categoryAccuracy,
      thresholdMixed: mixedPoint.threshold,
    },
    clinical: {
      bits: settings.bits,
      bias: binary.bias,
      threshold: chosen.threshold,
      table: encodeWeights(binary.weights),
    },
    category: {
      bits: settings.categoryBits,
      labels: [...blockedCategories],
      biases: [...categories.biases],
      table: encodeWeights(categories.weights),
    },
  };
  writeFileSync(modelPath, `${JSON.stringify(model, null, 1)}\n`);
  console.log(`Wrote ${modelPath} (version ${model.version})`);
}

if (import.meta.main) main();
