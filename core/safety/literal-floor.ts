/**
 * The words any match of a regular expression must contain, read from its source: a set of
 * lower-case literals, one of which every match (with what its look-arounds read) holds. A street
 * pattern needs "street", "avenue", "rua"… somewhere; a prompt holding none cannot match it, and
 * the pattern is skipped without a scan. Most prompts hold none of most patterns' words.
 *
 * The same idea as `digit-floor.ts`, and the same rule: wherever the source says too little to be
 * sure, there is no requirement, and the pattern runs. It is RE2's "prefilter" in small: each part
 * of a pattern says the few strings it can match exactly, when few (`exact`), and a set of literals
 * one of which it surely holds (`any`). Sequences join their exact strings while the set stays
 * small; alternatives unite their requirements; a part that may match nothing requires nothing; a
 * look-ahead or a look-behind requires what it reads, since that is in the text too.
 *
 * Letters are compared in lower case, whatever the flags: a case-sensitive match is also a
 * case-blind one. The text is lower-cased by `toLowerCase` with one more step, `ſ` (long s) to
 * "s": under the `iu` flags it matches "s", and the Kelvin sign, the only other character a
 * Unicode case-blind pattern matches with an ASCII letter, lower-cases to "k" already. Characters
 * past ASCII are never part of a literal. `test/core-redact.test.ts` checks every detector's set
 * against every match it makes over the corpus and over generated text.
 */

import { type ClassItem, type Node, parseSource } from "./regex-source.ts";

/** Exact sets larger than this are given up: they grow as products do. */
const MAX_STRINGS = 64;
/** Requirements larger than this are given up: they would cost more to check than they spare. */
const MAX_LITERALS = 512;
/** A literal shorter than this is in nearly every text: it requires nothing. */
const MIN_LITERAL = 2;

interface Part {
  /** Every string the part can match, in lower case; null when unknown or too many. */
  exact: readonly string[] | null;
  /** Strings one of which every match starts with, and ends with ("" when nothing is known). */
  prefix: readonly string[];
  suffix: readonly string[];
  /** Literals one of which any match of the part holds (or its look-arounds read); null when none is known. */
  any: readonly string[] | null;
}

const NOTHING: readonly string[] = [""];
const EMPTY: Part = { exact: NOTHING, prefix: NOTHING, suffix: NOTHING, any: null };
const UNKNOWN: Part = { exact: null, prefix: NOTHING, suffix: NOTHING, any: null };

function exactly(strings: readonly string[]): Part {
  return { exact: strings, prefix: strings, suffix: strings, any: null };
}

/** A set of exact strings as a requirement: each must be long enough to be worth looking for. */
function required(exact: readonly string[] | null): readonly string[] | null {
  if (exact === null || exact.length === 0 || exact.some((value) => value.length < MIN_LITERAL)) return null;
  return exact;
}

/** The more selective of two requirements: longer shortest literal, then fewer literals. */
function better(a: readonly string[] | null, b: readonly string[] | null): readonly string[] | null {
  if (a === null) return b;
  if (b === null) return a;
  const shortest = (set: readonly string[]) => Math.min(...set.map((value) => value.length));
  const [la, lb] = [shortest(a), shortest(b)];
  if (la !== lb) return la > lb ? a : b;
  return a.length <= b.length ? a : b;
}

/** A requirement without the literals that hold another of its literals ("strasse" beside "stra"). */
function simplest(set: readonly string[] | null): readonly string[] | null {
  if (set === null) return null;
  return set.filter((word, k) => !set.some((other, j) => j !== k && word.includes(other) && (other !== word || j < k)));
}

function best(part: Part): readonly string[] | null {
  return better(better(part.any, required(part.exact)), better(required(part.prefix), required(part.suffix)));
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/** Every `x + y`, or null when there would be too many. */
function cross(xs: readonly string[], ys: readonly string[]): string[] | null {
  return xs.length * ys.length <= MAX_STRINGS ? unique(xs.flatMap((x) => ys.map((y) => x + y))) : null;
}

/** The union of two sets, or null when too large. */
function union(xs: readonly string[], ys: readonly string[]): string[] | null {
  return xs.length + ys.length <= MAX_STRINGS ? unique([...xs, ...ys]) : null;
}

/** `a` followed by `b`. */
function then(a: Part, b: Part): Part {
  const exact = a.exact !== null && b.exact !== null ? cross(a.exact, b.exact) : null;
  if (exact !== null) return { ...exactly(exact), any: better(a.any, b.any) };
  // Where the two meet, what `a` surely ends with and `b` surely starts with stand side by side.
  const middle = cross(a.suffix, b.prefix);
  const prefix = a.exact !== null ? (cross(a.exact, b.prefix) ?? a.exact) : a.prefix;
  const suffix = b.exact !== null ? (cross(a.suffix, b.exact) ?? b.exact) : b.suffix;
  return {
    exact: null,
    prefix,
    suffix,
    any: better(better(best(a), best(b)), required(middle)),
  };
}

/** `a` or `b`. */
function either(a: Part, b: Part): Part {
  const [ra, rb] = [best(a), best(b)];
  const any =
    ra !== null && rb !== null && ra.length + rb.length <= MAX_LITERALS ? simplest([...new Set([...ra, ...rb])]) : null;
  const exact = a.exact !== null && b.exact !== null ? union(a.exact, b.exact) : null;
  if (exact !== null) return { ...exactly(exact), any };
  return {
    exact: null,
    prefix: union(a.prefix, b.prefix) ?? NOTHING,
    suffix: union(a.suffix, b.suffix) ?? NOTHING,
    any,
  };
}

/** One character of the pattern, in lower case: a literal only when it is ASCII. */
function char(value: string): Part {
  return value.charCodeAt(0) < 128 ? exactly([value.toLowerCase()]) : UNKNOWN;
}

export function literalFloor(source: string): readonly string[] | null {
  return simplest(best(partOf(parseSource(source))));
}

/** A class's characters, when it is a short list of ASCII ones (`[Rr]`; not `['’]`: `’` is past ASCII). */
function classPart(negated: boolean, items: readonly ClassItem[]): Part {
  if (negated || items.length === 0) return UNKNOWN;
  const chars = new Set<string>();
  for (const item of items) {
    if (item.type === "escape") return UNKNOWN;
    if (item.type === "char") chars.add(item.value);
    else
      for (let code = item.low.charCodeAt(0); code <= item.high.charCodeAt(0) && chars.size <= 8; code++)
        chars.add(String.fromCharCode(code));
  }
  if ([...chars].some((value) => value.charCodeAt(0) >= 128)) return UNKNOWN;
  const lower = unique([...chars].map((value) => value.toLowerCase()));
  return lower.length <= 8 ? exactly(lower) : UNKNOWN;
}

/** An atom and its quantifier: once or more requires what the atom does; `?` adds the empty string. */
function repeatPart(atom: Part, least: number, most: number): Part {
  if (least === 0 && most === 1 && atom.exact !== null) return exactly(unique(["", ...atom.exact]));
  if (least === 0) return UNKNOWN;
  let part = atom;
  for (let k = 1; k < least && k < 4; k++) part = then(part, atom);
  // Repeated a fixed number of times (at most four, `then` above), the exact strings stand;
  // otherwise the repetitions surely start and end as the atom does.
  if (least === most && least < 4) return part;
  return { exact: null, prefix: atom.prefix, suffix: atom.suffix, any: best(part) };
}

function partOf(node: Node): Part {
  switch (node.type) {
    case "sequence":
      return node.items.reduce((part, item) => then(part, partOf(item)), EMPTY);
    case "alternation":
      return node.options.map(partOf).reduce(either);
    case "repeat":
      return repeatPart(partOf(node.atom), node.least, node.most);
    case "group": {
      const inner = partOf(node.inner);
      if (node.kind === "group") return inner;
      // A positive look-around matches text that is there: what it holds, the text holds.
      return node.kind === "ahead" || node.kind === "behind" ? { ...EMPTY, any: best(inner) } : EMPTY;
    }
    case "char":
      return char(node.value);
    case "class":
      return classPart(node.negated, node.items);
    case "boundary":
    case "anchor":
      return EMPTY;
    case "escape":
    case "any":
    case "backreference":
      return UNKNOWN;
  }
}

/**
 * The text as `literalFloor`'s literals are compared with it: lower case, and the long s as "s"
 * (see the top of the file).
 */
export function literalText(text: string): string {
  const lower = text.toLowerCase();
  return lower.includes("ſ") ? lower.replaceAll("ſ", "s") : lower;
}

/** Slots of the table of the pairs and triples of characters a text holds. */
const GRAM_SLOTS = 1 << 16;
const stamps = new Uint32Array(GRAM_SLOTS);
let generation = 0;

function pairSlot(a: number, b: number): number {
  return (Math.imul(a, 0x9e3779b1) ^ Math.imul(b, 0x85ebca77)) >>> 16;
}

function tripleSlot(a: number, b: number, c: number): number {
  return (Math.imul(a, 0xc2b2ae3d) ^ Math.imul(b, 0x27d4eb2f) ^ Math.imul(c, 0x165667b1)) >>> 16;
}

/**
 * Which literals a text may hold, answered from the pairs and triples of characters it holds: a
 * literal whose every triple (or, for two characters, whose pair) is in the text may be there; one
 * with a triple missing is surely not. One pass over the text, then a few table reads per literal.
 */
export class TextGrams {
  readonly #lower: string;
  #generation = 0;

  constructor(lower: string) {
    this.#lower = lower;
    this.#fill();
  }

  #fill(): void {
    generation = generation === 0xffffffff ? 1 : generation + 1;
    if (generation === 1) stamps.fill(0);
    const text = this.#lower;
    let a = text.charCodeAt(0);
    let b = text.charCodeAt(1);
    for (let i = 2; i <= text.length; i++) {
      stamps[pairSlot(a, b)] = generation;
      if (i === text.length) break;
      const c = text.charCodeAt(i);
      stamps[tripleSlot(a, b, c)] = generation;
      a = b;
      b = c;
    }
    this.#generation = generation;
  }

  /** Whether the text may hold one of `literals`; null (no requirement) always holds. */
  mayHoldAny(literals: Literals | null): boolean {
    if (literals === null) return true;
    // Another text's table was filled since: fill this one's again.
    if (this.#generation !== generation) this.#fill();
    const { words, heads } = literals;
    for (let k = 0; k < heads.length; k++) {
      // Most literals are settled by their first pair or triple.
      if (stamps[heads[k] as number] !== generation) continue;
      const word = words[k] as string;
      let all = true;
      for (let i = 3; i < word.length && all; i++) {
        all = stamps[tripleSlot(word.charCodeAt(i - 2), word.charCodeAt(i - 1), word.charCodeAt(i))] === generation;
      }
      if (all) return true;
    }
    return false;
  }
}

/** A pattern's literals (`literalFloor`), with the slot of each one's first pair or triple. */
export class Literals {
  readonly heads: Int32Array;

  constructor(readonly words: readonly string[]) {
    this.heads = Int32Array.from(words, (word) =>
      word.length === 2
        ? pairSlot(word.charCodeAt(0), word.charCodeAt(1))
        : tripleSlot(word.charCodeAt(0), word.charCodeAt(1), word.charCodeAt(2)),
    );
  }

  /** A pattern's literals, or null when it has no requirement. */
  static of(pattern: RegExp): Literals | null {
    const words = literalFloor(pattern.source);
    return words === null ? null : new Literals(words);
  }
}
