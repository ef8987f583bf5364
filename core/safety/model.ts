/**
 * The learned part of the clinical boundary: two linear models over the hashed features of
 * `features.ts`, trained by `eval/safety/train.ts` on `eval/safety/train/` and shipped as
 * `model.json` (versioned, validated when loaded).
 *
 * - `clinical`: logistic regression, clinical vs builder. A prompt is clinical when its score
 *   (the log-odds) reaches `threshold`, chosen by cross-validation on the training corpus for
 *   high clinical recall.
 * - `category`: multinomial logistic regression over the word-level features (folded into a
 *   smaller table), trained on clinical cases only; it names what fired (`blocked_category`).
 *
 * Weights are stored as 16-bit integers with one scale per table: a quarter of the size of
 * doubles, and the rounding moves a score by far less than the margin around the threshold.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as v from "valibot";
import { type BlockedCategory, blockedCategories } from "./categories.ts";
import { FeatureExtractor } from "./features.ts";
import { fold } from "./fold.ts";
import { decodeWeights } from "./shipped.ts";
import { vocab } from "./vocab.ts";

export const modelPath = fileURLToPath(new URL("./model.json", import.meta.url));

const tableSchema = v.object({ scale: v.number(), weights: v.string() });

export const modelFileSchema = v.object({
  format: v.literal(1),
  /** Hash of the training corpus, the vocabulary and the training settings. */
  version: v.string(),
  trainedOn: v.object({ cases: v.number(), clinical: v.number(), builder: v.number() }),
  settings: v.record(v.string(), v.union([v.number(), v.string()])),
  crossValidation: v.record(v.string(), v.number()),
  clinical: v.object({ bits: v.number(), bias: v.number(), threshold: v.number(), table: tableSchema }),
  category: v.object({
    bits: v.number(),
    labels: v.array(v.picklist(blockedCategories)),
    biases: v.array(v.number()),
    table: tableSchema,
  }),
});
export type ModelFile = v.InferOutput<typeof modelFileSchema>;

export function encodeWeights(weights: Float64Array): v.InferOutput<typeof tableSchema> {
  let max = 0;
  for (const w of weights) max = Math.max(max, Math.abs(w));
  const scale = max === 0 ? 1 : max / 32767;
  const quantized = new Int16Array(weights.length);
  for (let i = 0; i < weights.length; i++) quantized[i] = Math.round((weights[i] ?? 0) / scale);
  return { scale, weights: Buffer.from(quantized.buffer).toString("base64") };
}

export interface ModelVerdict {
  /** Log-odds that the prompt asks for clinical advice. */
  score: number;
  clinical: boolean;
}

export class SafetyModel {
  readonly #extractor: FeatureExtractor;
  readonly #weights: Int16Array;
  readonly #categoryWeights: Int16Array;

  constructor(readonly file: ModelFile) {
    this.#extractor = new FeatureExtractor(file.clinical.bits, vocab(), file.category.bits);
    this.#weights = decodeWeights(file.clinical.table.weights, 1 << file.clinical.bits, "safety model");
    this.#categoryWeights = decodeWeights(
      file.category.table.weights,
      file.category.labels.length << file.category.bits,
      "safety model's categories",
    );
  }

  /** Scores a prompt; `folded` says it is already folded (`fold.ts`). */
  assess(prompt: string, folded = false): ModelVerdict {
    const { indices } = this.#extractor.extract(folded ? prompt : fold(prompt));
    // Indexed loops: iterating a typed array with for…of goes through the iterator protocol, which
    // cost more than the sums themselves. The integers sum exactly; the scale applies once.
    let sum = 0;
    for (let i = 0; i < indices.length; i++) sum += this.#weights[indices[i] ?? 0] ?? 0;
    const score = this.file.clinical.bias + sum * this.file.clinical.table.scale;
    return { score, clinical: score >= this.file.clinical.threshold };
  }

  /** The most likely kind of clinical ask. */
  category(prompt: string, folded = false): BlockedCategory {
    const { words } = this.#extractor.extract(folded ? prompt : fold(prompt));
    const { labels, biases, bits } = this.file.category;
    const { scale } = this.file.category.table;
    let best = 0;
    let bestScore = Number.NEGATIVE_INFINITY;
    for (let label = 0; label < labels.length; label++) {
      let sum = 0;
      const offset = label << bits;
      for (let i = 0; i < words.length; i++) sum += this.#categoryWeights[offset + (words[i] ?? 0)] ?? 0;
      const score = (biases[label] ?? 0) + sum * scale;
      if (score > bestScore) {
        bestScore = score;
        best = label;
      }
    }
    return labels[best] ?? "treatment_recommendation";
  }
}

let loaded: SafetyModel | undefined;

/** The shipped model, loaded on first use. */
export function safetyModel(): SafetyModel {
  loaded ??= new SafetyModel(v.parse(modelFileSchema, JSON.parse(readFileSync(modelPath, "utf8"))));
  return loaded;
}
