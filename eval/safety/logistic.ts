/**
 * Binary logistic regression over hashed features, trained by AdaGrad: the one trainer behind the
 * clinical classifier (`train.ts`), the name tagger (`train-names.ts`) and the number tagger
 * (`train-numbers.ts`). Deterministic: examples are visited in an order drawn from a seeded
 * generator, so the same examples and settings give the same weights.
 */
import { random, shuffled } from "./random.ts";

export interface LogisticSettings {
  /** The table has `2^bits` weights. */
  bits: number;
  epochs: number;
  learningRate: number;
  biasLearningRate: number;
  l2: number;
  seed: number;
}

export interface Logistic {
  weights: Float64Array;
  bias: number;
}

/** What the trainer reads of an example: its feature indices, its label and how much it counts. */
export interface Sample {
  indices: ArrayLike<number>;
  positive: boolean;
  weight: number;
}

const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));

/** Log-odds of an example's feature indices. */
export function scoreLogistic(model: Logistic, indices: ArrayLike<number>): number {
  let z = model.bias;
  for (let k = 0; k < indices.length; k++) z += model.weights[indices[k] as number] ?? 0;
  return z;
}

export function trainLogistic<E>(
  examples: readonly E[],
  sample: (e: E) => Sample,
  settings: LogisticSettings,
): Logistic {
  const size = 1 << settings.bits;
  const model: Logistic = { weights: new Float64Array(size), bias: 0 };
  const squares = new Float64Array(size).fill(1e-8);
  let biasSquares = 1e-8;
  const next = random(settings.seed);
  for (let epoch = 0; epoch < settings.epochs; epoch++) {
    for (const example of shuffled(examples, next)) {
      const { indices, positive, weight } = sample(example);
      const g = (sigmoid(scoreLogistic(model, indices)) - (positive ? 1 : 0)) * weight;
      for (let k = 0; k < indices.length; k++) {
        const i = indices[k] as number;
        const w = model.weights[i] ?? 0;
        const grad = g + settings.l2 * w;
        squares[i] = (squares[i] ?? 0) + grad * grad;
        model.weights[i] = w - (settings.learningRate * grad) / Math.sqrt(squares[i] ?? 1);
      }
      biasSquares += g * g;
      model.bias -= (settings.biasLearningRate * g) / Math.sqrt(biasSquares);
    }
  }
  return model;
}

/** Out-of-writer scores: each writer's examples scored by a model trained on everyone else's. */
export function crossValidateLogistic<E extends { writer: string }>(
  examples: readonly E[],
  sample: (e: E) => Sample,
  settings: LogisticSettings,
): number[] {
  const scores = new Array<number>(examples.length).fill(0);
  for (const writer of new Set(examples.map((e) => e.writer))) {
    const model = trainLogistic(
      examples.filter((e) => e.writer !== writer),
      sample,
      settings,
    );
    examples.forEach((e, i) => {
      if (e.writer === writer) scores[i] = scoreLogistic(model, sample(e).indices);
    });
  }
  return scores;
}
