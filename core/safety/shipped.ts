/**
 * What the shipped models have in common: their weight tables as stored, and (for the taggers'
 * `name-model.json` and `number-model.json`) a file read and checked once, on first use, or null
 * when none was trained yet (the rules still run). A trainer may put a model built in memory in
 * its place.
 */
import { readFileSync } from "node:fs";

/**
 * A weight table as stored (base64 of 16-bit integers, scaled when a score is summed), checked to
 * hold `length` weights. Kept at that size, not widened to floats, because the tables are read at
 * random and compete for the processor's cache with everything else the boundary reads: half the
 * bytes is a measurable part of its cost.
 */
export function decodeWeights(base64: string, length: number, model: string): Int16Array {
  const bytes = Buffer.from(base64, "base64");
  if (bytes.length !== length * 2)
    throw new Error(`${model}: the table has ${bytes.length / 2} weights, not ${length}`);
  return new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
}

export interface Shipped<T> {
  get(): T | null;
  use(model: T | null): void;
}

export function shipped<T>(path: string, load: (json: unknown) => T): Shipped<T> {
  let loaded: T | null | undefined;
  return {
    get() {
      if (loaded === undefined) {
        try {
          loaded = load(JSON.parse(readFileSync(path, "utf8")));
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
          loaded = null;
        }
      }
      return loaded;
    },
    use(model) {
      loaded = model;
    },
  };
}
