/**
 * A Bloom filter: set membership in a few bits per word, with a small, known rate of false
 * positives and none of false negatives. The vocabularies the safety model uses (medical terms,
 * human names, common English words) come from maintained npm packages; the build script
 * (`eval/safety/vocab.ts`) packs each into one of these, so the CLI and the server load a few
 * hundred kilobytes at start instead of those packages.
 */
import { FNV_OFFSET, fmix, fnv } from "./hash.ts";

/** Probes per word; with the sizes chosen in the build script, false positives stay under 1%. */
export const BLOOM_PROBES = 4;

export class Bloom {
  readonly #bits: Uint8Array;
  readonly #mask: number;

  constructor(bits: Uint8Array) {
    const size = bits.length * 8;
    if (size === 0 || (size & (size - 1)) !== 0) throw new Error("A Bloom filter's size must be a power of two");
    this.#bits = bits;
    this.#mask = size - 1;
  }

  static empty(sizeBits: number): Bloom {
    return new Bloom(new Uint8Array(sizeBits / 8));
  }

  get bytes(): Uint8Array {
    return this.#bits;
  }

  add(word: string): void {
    this.#probe(word, 0, word.length, true);
  }

  /** Whether `text[start, end)` (already lower case and folded) is in the set. */
  hasRange(text: string, start: number, end: number): boolean {
    return this.#probe(text, start, end, false);
  }

  has(word: string): boolean {
    return this.#probe(word, 0, word.length, false);
  }

  /**
   * A word's hash, the same for every filter: a word looked up in several of them is hashed once,
   * then tested with `hasHash`.
   */
  static hashOf(word: string): number {
    return fnv(word, 0, word.length, FNV_OFFSET);
  }

  /** Whether the word of this `hashOf` is in the set: the same answer as `has`. */
  hasHash(h1: number): boolean {
    const h2 = fmix(h1) | 1;
    for (let i = 0; i < BLOOM_PROBES; i++) {
      const bit = (h1 + Math.imul(i, h2)) & this.#mask;
      if (((this.#bits[bit >>> 3] ?? 0) & (1 << (bit & 7))) === 0) return false;
    }
    return true;
  }

  #probe(text: string, start: number, end: number, set: boolean): boolean {
    // Double hashing (Kirsch and Mitzenmacher): probe i is h1 + i * h2.
    const h1 = fnv(text, start, end, FNV_OFFSET);
    const h2 = fmix(h1) | 1;
    for (let i = 0; i < BLOOM_PROBES; i++) {
      const bit = (h1 + Math.imul(i, h2)) & this.#mask;
      const byte = bit >>> 3;
      const flag = 1 << (bit & 7);
      if (set) this.#bits[byte] = (this.#bits[byte] ?? 0) | flag;
      else if (((this.#bits[byte] ?? 0) & flag) === 0) return false;
    }
    return true;
  }
}
