/**
 * Trains the clinical-advice model (`core/safety/model.json`) from the training part of the
 * corpus, `eval/safety/train/`. The held-back part is never read here.
 *
 *   bun eval/safety/train.ts          train, cross-validate, write the model
 *   bun eval/safety/train.ts --cv     cross-validate only (for trying settings), write nothing
 *
 * Deterministic: the same corpus, vocabulary and settings give the same bytes (a seeded shuffle,
 * no clock, no parallelism). The model's `version` is a hash of exactly those inputs, so the
 * evaluation can tell a model that is stale against its corpus.
 *
 * Method: logistic regression over the hashed features of `core/safety/features.ts`, fitted by
 * AdaGrad (per-feature learning rates, which suit sparse text features) with L2 regularisation
 * and clinical cases weighted up, since a missed clinical prompt costs more than a blocked
 * builder one. The decision threshold is read off 5-fold cross-validation: the highest
 * threshold that keeps out-of-fold clinical recall at `targetRecall`, minus a margin.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { blockedCategories } from "../../core/safety/categories.ts";
import { FeatureExtractor } from "../../core/safety/features.ts";
import { fold } from "../../core/safety/fold.ts";
import { encodeWeights, type ModelFile, modelPath } from "../../core/safety/model.ts";
import { vocab, vocabPath } from "../../core/safety/vocab.ts";
import { classifyCases, corpusDir } from "./corpus.ts";

const defaults = {
  /** `mil`: a prompt scores as its best instance among itself and its sentences; `bag`: as a whole. */
  mode: "bag" as "mil" | "bag",
  bits: 18,
  categoryBits: 13,
  epochs: 60,
  learningRate: 0.01,
  /** The bias moves faster than the weights: with AdaGrad's small steps it would stay near 0. */
  biasLearningRate: 0.3,
  l2: 1e-6,
  clinicalWeight: 1,
  categoryEpochs: 30,
  categoryLearningRate: 0.3,
  folds: 5,
  targetRecall: 0.995,
  thresholdMargin: 0.25,
  seed: 20261124,
};

/** `SAFETY_TRAIN_SETTINGS='{"epochs":30}'` overrides settings, for trying them with `--cv`. */
const settings: typeof defaults = { ...defaults, ...JSON.parse(process.env.SAFETY_TRAIN_SETTINGS ?? "{}") };

interface Example {
  /** Features of the whole prompt. */
  indices: Uint32Array;
  words: Uint32Array;
  /** Features of each sentence on its own, when the prompt has more than one. */
  sentences: Uint32Array[];
  clinical: boolean;
  category: number;
}

/** mulberry32: a small seeded generator, so shuffles are the same on every run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffled<T>(items: readonly T[], next: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));

interface Binary {
  weights: Float64Array;
  bias: number;
}

/** The prompt and, in `mil` mode, each of its sentences: the model scores a prompt by its best instance. */
function instancesOf(example: Example): Uint32Array[] {
  return settings.mode === "mil" && example.sentences.length > 1
    ? [example.indices, ...example.sentences]
    : [example.indices];
}

function dot(weights: Float64Array, bias: number, indices: Uint32Array): number {
  let z = bias;
  for (const i of indices) z += weights[i] ?? 0;
  return z;
}

/**
 * Logistic regression on each prompt's highest-scoring instance (multiple-instance learning with
 * the max): a prompt is clinical when any of its sentences asks for clinical advice, so a long
 * preamble cannot dilute the ask, and a builder prompt must have no sentence that looks clinical.
 */
function trainBinary(examples: readonly Example[]): Binary {
  const size = 1 << settings.bits;
  const weights = new Float64Array(size);
  const squares = new Float64Array(size).fill(1e-8);
  let bias = 0;
  let biasSquares = 1e-8;
  const next = random(settings.seed);
  for (let epoch = 0; epoch < settings.epochs; epoch++) {
    for (const example of shuffled(examples, next)) {
      let best: Uint32Array = example.indices;
      let z = Number.NEGATIVE_INFINITY;
      for (const instance of instancesOf(example)) {
        const score = dot(weights, bias, instance);
        if (score > z) {
          z = score;
          best = instance;
        }
      }
      const target = example.clinical ? 1 : 0;
      const g = (sigmoid(z) - target) * (example.clinical ? settings.clinicalWeight : 1);
      for (const i of best) {
        const w = weights[i] ?? 0;
        const grad = g + settings.l2 * w;
        squares[i] = (squares[i] ?? 0) + grad * grad;
        weights[i] = w - (settings.learningRate * grad) / Math.sqrt(squares[i] ?? 1);
      }
      biasSquares += g * g;
      bias -= (settings.biasLearningRate * g) / Math.sqrt(biasSquares);
    }
  }
  return { weights, bias };
}

function scoreBinary(model: Binary, example: Example): number {
  let z = Number.NEGATIVE_INFINITY;
  for (const instance of instancesOf(example)) z = Math.max(z, dot(model.weights, model.bias, instance));
  return z;
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

/** The highest threshold keeping `targetRecall` of clinical scores at or above it, minus the margin. */
function thresholdFor(clinicalScores: number[]): number {
  const sorted = [...clinicalScores].sort((a, b) => a - b);
  const allowedMisses = Math.floor(sorted.length * (1 - settings.targetRecall));
  return (sorted[allowedMisses] ?? 0) - settings.thresholdMargin;
}

function crossValidate(examples: readonly Example[]) {
  const order = shuffled(
    examples.map((_, i) => i),
    random(settings.seed + 2),
  );
  const scores = new Float64Array(examples.length);
  let categoryHits = 0;
  let categoryTotal = 0;
  for (let fold = 0; fold < settings.folds; fold++) {
    const test = new Set(order.filter((_, position) => position % settings.folds === fold));
    const training = examples.filter((_, i) => !test.has(i));
    const binary = trainBinary(training);
    const categories = trainCategories(training.filter((e) => e.clinical));
    for (const i of test) {
      const example = examples[i] as Example;
      scores[i] = scoreBinary(binary, example);
      if (example.clinical) {
        categoryTotal++;
        if (categoryOf(categories, example) === example.category) categoryHits++;
      }
    }
  }
  const clinical = examples.flatMap((e, i) => (e.clinical ? [scores[i] ?? 0] : []));
  const builder = examples.flatMap((e, i) => (e.clinical ? [] : [scores[i] ?? 0]));
  const threshold = thresholdFor(clinical);
  const rate = (values: number[], hit: (s: number) => boolean) => values.filter(hit).length / values.length;
  const sortedClinical = [...clinical].sort((a, b) => a - b);
  const passAtRecall = (recall: number) => {
    const at = sortedClinical[Math.floor(sortedClinical.length * (1 - recall))] ?? 0;
    return rate(builder, (s) => s < at);
  };
  console.log(
    `  builder pass at clinical recall 98%: ${(100 * passAtRecall(0.98)).toFixed(1)}%, 99%: ${(100 * passAtRecall(0.99)).toFixed(1)}%, 99.5%: ${(100 * passAtRecall(0.995)).toFixed(1)}%`,
  );
  return {
    threshold,
    recall: rate(clinical, (s) => s >= threshold),
    builderPass: rate(builder, (s) => s < threshold),
    recallAtZero: rate(clinical, (s) => s >= 0),
    builderPassAtZero: rate(builder, (s) => s < 0),
    categoryAccuracy: categoryHits / categoryTotal,
    scores,
  };
}

/** Hash of everything the model depends on: corpus, vocabulary, feature code and settings. */
function versionOf(): string {
  const hash = createHash("sha256");
  const trainDir = join(corpusDir, "train");
  for (const file of readdirSync(trainDir).sort()) hash.update(file).update(readFileSync(join(trainDir, file)));
  hash.update(readFileSync(vocabPath));
  for (const source of ["features.ts", "hash.ts", "fold.ts"]) {
    hash.update(readFileSync(new URL(`../../core/safety/${source}`, import.meta.url)));
  }
  hash.update(JSON.stringify(settings));
  return hash.digest("hex").slice(0, 16);
}

export function currentVersion(): string {
  return versionOf();
}

function main(): void {
  const cvOnly = process.argv.includes("--cv");
  const cases = classifyCases("train");
  const extractor = new FeatureExtractor(settings.bits, vocab());
  const examples: Example[] = cases.map((c) => {
    const text = fold(c.text);
    const sentences: Uint32Array[] = [];
    extractor.sentences(text, (features) => sentences.push(Uint32Array.from(features.indices)));
    const features = extractor.extract(text);
    return {
      indices: Uint32Array.from(features.indices),
      words: Uint32Array.from(features.words),
      sentences,
      clinical: c.label === "clinical",
      category: c.label === "clinical" ? blockedCategories.indexOf(c.category) : -1,
    };
  });
  const clinicalCount = examples.filter((e) => e.clinical).length;
  console.log(
    `Training cases: ${examples.length} (${clinicalCount} clinical, ${examples.length - clinicalCount} builder)`,
  );

  const cv = crossValidate(examples);
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  console.log(
    `${settings.folds}-fold cross-validation: threshold ${cv.threshold.toFixed(3)}: clinical recall ${pct(cv.recall)}, builder pass ${pct(cv.builderPass)}` +
      ` (at 0: ${pct(cv.recallAtZero)} / ${pct(cv.builderPassAtZero)}); category accuracy ${pct(cv.categoryAccuracy)}`,
  );
  if (process.argv.includes("--misses")) {
    const at = process.argv.includes("--at") ? Number(process.argv[process.argv.indexOf("--at") + 1]) : cv.threshold;
    cases.forEach((c, i) => {
      const s = cv.scores[i] ?? 0;
      const wrong = c.label === "clinical" ? s < at : s >= at;
      if (wrong) console.log(`  ${c.label} ${c.category} ${s.toFixed(2)}: ${c.text.slice(0, 160).replace(/\n/g, " ")}`);
    });
  }
  if (cvOnly) return;

  const binary = trainBinary(examples);
  const categories = trainCategories(examples.filter((e) => e.clinical));
  const model: ModelFile = {
    format: 1,
    version: versionOf(),
    trainedOn: { cases: examples.length, clinical: clinicalCount, builder: examples.length - clinicalCount },
    settings,
    crossValidation: {
      clinicalRecall: cv.recall,
      builderPass: cv.builderPass,
      categoryAccuracy: cv.categoryAccuracy,
    },
    clinical: { bits: settings.bits, bias: binary.bias, threshold: cv.threshold, table: encodeWeights(binary.weights) },
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
