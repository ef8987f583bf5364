/**
 * The hashes behind the safety model's feature space and its vocabulary filters. They must give
 * the same numbers in the training script and at run time, so both import them from here; they
 * hash a range of a string in place, so scoring a prompt allocates no substrings.
 */

/** FNV-1a over `text[start, end)`, continuing from `seed`. */
export function fnv(text: string, start: number, end: number, seed: number): number {
  let h = seed;
  for (let i = start; i < end; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return h >>> 0;
}

/** One more character folded into an FNV-1a state. */
export function fnvStep(h: number, code: number): number {
  return Math.imul(h ^ code, 16777619) >>> 0;
}

/** Two hashes combined into one (a word pair, a namespace and a word). */
export function combine(a: number, b: number): number {
  return fmix(Math.imul(a, 0x9e3779b1) ^ b);
}

/** MurmurHash3's finalizer: spreads every input bit over the low bits used as an index. */
export function fmix(value: number): number {
  let h = value >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export const FNV_OFFSET = 2166136261;
