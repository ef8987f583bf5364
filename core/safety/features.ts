/**
 * What the clinical-advice model sees of a prompt: hashed features ("the hashing trick", as in
 * Vowpal Wabbit and most spam filters), so the model is a flat array of weights and scoring is a
 * sum over the prompt's features, with no vocabulary to ship.
 *
 * For each word of the folded prompt (`fold.ts`):
 * - the word itself and the pair it forms with the word before (`should i`, `my metformin`);
 * - its character 3- to 5-grams with word boundaries, so a misspelling ("amoxicilin") or an
 *   unseen drug with a telling stem ("-pril", "-olol", "-mab") lands near the words it resembles;
 * - its vocabulary class when it is a medical term or a number, alone and paired with its
 *   neighbours (`take <med>`, `<num> mg`), so what the corpus says about one drug carries over to
 *   drugs it never named.
 * Words inside quotes ("…", '…', `…`) get features of their own namespace and no character
 * n-grams: a quoted question inside a builder's request is evidence about the agent being built
 * (a refusal test, a red-team suite), not the builder's own question. When almost everything is
 * quoted, the quotes are ignored, so wrapping one's own question in quotes gets nothing past.
 *
 * The extractor reuses its buffers and allocates nothing per word; it is not reentrant, which
 * is fine for JavaScript's one thread per isolate.
 */
import { combine, FNV_OFFSET, fnv, fnvStep } from "./hash.ts";
import type { Vocab } from "./vocab.ts";

/** Longest prefix examined. Prompts are capped at 16,000 characters. */
export const MAX_FEATURE_CHARS = 16_000;

/** Namespaces: each kind of feature hashes apart from the others. */
const NS = {
  word: 0x1001,
  pair: 0x1002,
  chars: 0x1003,
  quotedWord: 0x1004,
  quotedPair: 0x1005,
  classPair: 0x1006,
  global: 0x1007,
  lastWord: 0x1008,
  lastPair: 0x1009,
  first: 0x100a,
  action: 0x100b,
  refusedAction: 0x100c,
} as const;

/**
 * The software that would act ("the bot should reply…", "a step that decides…"): what it is asked
 * to do is the clearest sign of who gives the judgement, so the verb after one of these nouns
 * becomes a feature of its own (with the negation, if any, in between: "never says whether").
 */
/** A set of words, held as the hashes tokens already carry, so a lookup takes no substring. */
const hashes = (words: string) => new Set(words.split(" ").map((word) => fnv(word, 0, word.length, FNV_OFFSET)));
const ACTORS = hashes(
  "bot chatbot agent assistant loop step route template reply response message sms text workflow it model llm ai prompt output system app",
);
/** Words between an actor and its verb that carry no action: modals, adverbs, relative pronouns. */
const LINKS = hashes(
  "should must will would can could shall may might to that which who needs need has have is are then just only also always automatically directly itself basically actually",
);
const NEGATIONS = hashes("never not don't doesn't dont doesnt won't wont cannot can't cant no shouldn't shouldnt");
const ACTION_REACH = 4;

const NUMBER = fnv("<num>", 0, 5, FNV_OFFSET);
const MEDICAL = fnv("<med>", 0, 5, FNV_OFFSET);
const START = fnv("<s>", 0, 3, FNV_OFFSET);
const GLOBAL_QUOTED = combine(NS.global, 1);
const GLOBAL_QUESTION = combine(NS.global, 2);

const KIND_WORD = 0;
const KIND_NUMBER = 1;
const KIND_PLACEHOLDER = 2;

/** Fewer words than this outside quotes, and the quotes do not count. */
const MIN_OUTER_WORDS = 2;
const MAX_CHARGRAM_WORD = 24;

function isAlnum(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 48 && code <= 57);
}

function isLetter(code: number): boolean {
  return code >= 97 && code <= 122;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

const QUOTED = [/"[^"\n]{1,800}"/g, /`[^`]{1,800}`/g, /(?<![a-z0-9])'[^'\n]{2,400}'(?![a-z0-9])/g];

const LAST_SENTENCE_MIN_WORDS = 3;

/**
 * Where the prompt's last sentence starts (with the one before it when it is only a few words):
 * what a long prompt finally asks. Its words get features of their own, so a paragraph of
 * builder context cannot drown the question at its end.
 */
function lastSentenceStart(text: string): number {
  let end = text.length;
  while (end > 0 && (isWhite(text.charCodeAt(end - 1)) || isSentenceEnd(text.charCodeAt(end - 1)))) end--;
  let start = end;
  let words = 0;
  while (start > 0) {
    const at = start - 1;
    const code = text.charCodeAt(at);
    if (isSentenceEnd(code) && isWhite(text.charCodeAt(at + 1)) && words >= LAST_SENTENCE_MIN_WORDS) break;
    if (isAlnum(code) && !isAlnum(text.charCodeAt(at - 1))) words++;
    start = at;
  }
  return start;
}

/** `.`, `?`, `!` or a line break. */
function isSentenceEnd(code: number): boolean {
  return code === 46 || code === 63 || code === 33 || code === 10;
}

function isWhite(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 13;
}

/** The prompt `quotedSpans` last read, and its answer: the hard rules and the features read the same text. */
let quotedText: string | undefined;
let quoted: readonly number[] = [];

/** `[start, end)` pairs of the quoted passages of a folded prompt, in order of their starts. */
function quotedSpans(text: string): readonly number[] {
  if (text === quotedText) return quoted;
  quoted = findQuotedSpans(text);
  quotedText = text;
  return quoted;
}

function findQuotedSpans(text: string): number[] {
  const spans: Array<readonly [number, number]> = [];
  for (const pattern of QUOTED) {
    pattern.lastIndex = 0;
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      spans.push([match.index, match.index + match[0].length]);
    }
  }
  if (spans.length > 1) spans.sort((a, b) => a[0] - b[0]);
  return spans.flat();
}

/**
 * The folded prompt with its quoted passages blanked out, unless that would leave fewer than
 * `MIN_OUTER_WORDS` words: what the builder says in their own voice, for the hard rules.
 */
export function outerText(text: string): string {
  const spans = quotedSpans(text);
  if (spans.length === 0) return text;
  let out = "";
  let cursor = 0;
  for (let i = 0; i < spans.length; i += 2) {
    const start = Math.max(cursor, spans[i] ?? 0);
    const end = spans[i + 1] ?? 0;
    if (end <= start) continue;
    out += text.slice(cursor, start) + " ".repeat(end - start);
    cursor = end;
  }
  out += text.slice(cursor);
  return hasWords(out, MIN_OUTER_WORDS) ? out : text;
}

/** Whether `text` has at least `count` runs of `[a-z0-9]`: counted only that far, with no array of them. */
function hasWords(text: string, count: number): boolean {
  let words = 0;
  let inWord = false;
  for (let i = 0; i < text.length && words < count; i++) {
    const code = text.charCodeAt(i);
    const word = (code >= 97 && code <= 122) || (code >= 48 && code <= 57);
    if (word && !inWord) words++;
    inWord = word;
  }
  return words >= count;
}

export interface Features {
  /** Indices into the binary model's weights, each once. */
  readonly indices: Uint32Array;
  /** Indices of the word-level features (no character n-grams) in the category model's table, each once. */
  readonly words: Uint32Array;
}

export class FeatureExtractor {
  readonly #mask: number;
  readonly #stamp: Uint32Array;
  readonly #wordMask: number;
  readonly #wordStamp: Uint32Array;
  #generation = 0;
  #out: Uint32Array<ArrayBuffer> = new Uint32Array(1 << 16);
  #count = 0;
  #words: Uint32Array<ArrayBuffer> = new Uint32Array(1 << 14);
  #wordCount = 0;
  #starts = new Int32Array(1 << 13);
  #ends = new Int32Array(1 << 13);
  #kinds = new Uint8Array(1 << 13);
  #quoted = new Uint8Array(1 << 13);
  #hashes = new Uint32Array(1 << 13);
  #medical = new Uint8Array(1 << 13);
  /** The prompt the token arrays describe, and how many tokens it has. */
  #text = "";
  #tokens = 0;
  /** The prompt the features were last extracted from: a block's category reads them again. */
  #extracted: string | undefined;

  constructor(
    readonly bits: number,
    readonly vocab: Vocab,
    /** Size of the word-level table (the category model's), as a power of two. */
    readonly wordBits: number,
  ) {
    this.#mask = (1 << bits) - 1;
    this.#stamp = new Uint32Array(1 << bits);
    this.#wordMask = (1 << wordBits) - 1;
    this.#wordStamp = new Uint32Array(1 << wordBits);
  }

  /** Features of a whole folded prompt (see `fold.ts`). The views are valid until the next call. */
  extract(text: string): Features {
    if (text === this.#extracted) return this.#features();
    this.#load(text);
    this.#reset();
    const folded = this.#text;
    const tokens = this.#tokens;
    let quotedCount = 0;
    for (let i = 0; i < tokens; i++) quotedCount += this.#quoted[i] ?? 0;
    if (quotedCount > 0) this.#emitWord(GLOBAL_QUOTED);
    if (/\?\s*$/.test(folded)) this.#emitWord(GLOBAL_QUESTION);
    this.#emitTokens(0, tokens, lastSentenceStart(folded));
    this.#emitWord(combine(NS.global, 48 + bucket(tokens >> 3)));
    this.#emitOpening(tokens);
    this.#emitActions(tokens);
    this.#extracted = text;
    return this.#features();
  }

  #features(): Features {
    return { indices: this.#out.subarray(0, this.#count), words: this.#words.subarray(0, this.#wordCount) };
  }

  #reset(): void {
    this.#generation = (this.#generation + 1) >>> 0;
    if (this.#generation === 0) {
      this.#stamp.fill(0);
      this.#wordStamp.fill(0);
      this.#generation = 1;
    }
    this.#count = 0;
    this.#wordCount = 0;
  }

  /** Tokenizes `text` unless it is the prompt already loaded. */
  #load(text: string): void {
    const folded = text.length > MAX_FEATURE_CHARS ? text.slice(0, MAX_FEATURE_CHARS) : text;
    if (folded === this.#text && this.#tokens > 0) return;
    this.#text = folded;
    this.#tokens = this.#tokenize(folded);
  }

  /** The prompt's first three words of its own, each with its position, and their first pair. */
  #emitOpening(tokens: number): void {
    let position = 0;
    let previous = START;
    for (let i = 0; i < tokens && position < 3; i++) {
      if (this.#quoted[i] === 1) continue;
      const hash = this.#hashes[i] ?? 0;
      this.#emitWord(combine(NS.first + position, hash));
      if (position === 1) this.#emitWord(combine(NS.first + 8, combine(previous, hash)));
      previous = hash;
      position++;
    }
  }

  /** For each actor noun outside quotes, the verb it is given, by word and by its first four letters. */
  #emitActions(tokens: number): void {
    const text = this.#text;
    for (let i = 0; i < tokens; i++) {
      if (this.#quoted[i] === 1 || this.#kinds[i] !== KIND_WORD || !ACTORS.has(this.#hashes[i] ?? 0)) continue;
      let negated = false;
      for (let k = i + 1; k < tokens && k <= i + ACTION_REACH; k++) {
        if (this.#quoted[k] === 1 || this.#kinds[k] !== KIND_WORD) break;
        const hash = this.#hashes[k] ?? 0;
        if (NEGATIONS.has(hash)) {
          negated = true;
          continue;
        }
        if (LINKS.has(hash)) continue;
        const start = this.#starts[k] ?? 0;
        const stem = fnv(text, start, Math.min(start + 4, this.#ends[k] ?? 0), FNV_OFFSET);
        const namespace = negated ? NS.refusedAction : NS.action;
        this.#emitWord(combine(namespace, hash));
        this.#emitWord(combine(namespace + 16, stem));
        break;
      }
    }
  }

  /** Word, pair, class and character features of tokens `[from, to)`. */
  #emitTokens(from: number, to: number, lastStart: number): void {
    const text = this.#text;
    let previous = START;
    let previousMedical = false;
    let previousQuoted = false;
    let medicalWords = 0;
    let numbers = 0;
    for (let i = from; i < to; i++) {
      const quoted = this.#quoted[i] === 1;
      if (quoted !== previousQuoted) {
        previous = START;
        previousMedical = false;
        previousQuoted = quoted;
      }
      const hash = this.#hashes[i] ?? 0;
      const start = this.#starts[i] ?? 0;
      const medical = this.#medical[i] === 1;
      if (quoted) {
        this.#emitWord(combine(NS.quotedWord, hash));
        this.#emitWord(combine(NS.quotedPair, combine(previous, hash)));
        if (medical) this.#emitWord(combine(NS.quotedWord, MEDICAL));
      } else {
        if (medical) medicalWords++;
        if (this.#kinds[i] === KIND_NUMBER) numbers++;
        this.#emitWord(combine(NS.word, hash));
        this.#emitWord(combine(NS.pair, combine(previous, hash)));
        if (medical) {
          this.#emitWord(combine(NS.word, MEDICAL));
          this.#emitWord(combine(NS.classPair, combine(previous, MEDICAL)));
        }
        if (previousMedical) this.#emitWord(combine(NS.classPair, combine(MEDICAL, hash)));
        if (this.#kinds[i] === KIND_WORD) this.#charGrams(text, start, this.#ends[i] ?? 0);
        if (start >= lastStart) {
          this.#emitWord(combine(NS.lastWord, medical ? MEDICAL : hash));
          this.#emitWord(combine(NS.lastPair, combine(previous, hash)));
        }
      }
      previous = hash;
      previousMedical = medical;
    }
    this.#emitWord(combine(NS.global, 16 + bucket(medicalWords)));
    this.#emitWord(combine(NS.global, 32 + bucket(numbers)));
  }

  /**
   * Splits into words, numbers and placeholders, with their spans, kinds, and whether each is
   * quoted and medical. Returns how many tokens there are.
   */
  #tokenize(text: string): number {
    const inside = merged(quotedSpans(text));
    let next = 0;
    let count = 0;
    const length = text.length;
    let i = 0;
    while (i < length && count < this.#starts.length) {
      const code = text.charCodeAt(i);
      const start = i;
      let kind = -1;
      if (code === 91 /* [ */) {
        let j = i + 1;
        while (j < length && j - i <= 14 && (isLetter(text.charCodeAt(j)) || text.charCodeAt(j) === 95)) j++;
        if (j < length && text.charCodeAt(j) === 93 /* ] */ && j > i + 2) {
          kind = KIND_PLACEHOLDER;
          i = j + 1;
        }
      }
      if (kind < 0 && isAlnum(code)) {
        let digits = true;
        while (i < length) {
          const c = text.charCodeAt(i);
          if (isAlnum(c)) {
            if (!isDigit(c)) digits = false;
            i++;
          } else if (c === 39 /* ' */ && isLetter(text.charCodeAt(i + 1)) && isLetter(text.charCodeAt(i - 1))) {
            i++;
          } else break;
        }
        kind = digits ? KIND_NUMBER : KIND_WORD;
      }
      if (kind < 0) {
        i++;
        continue;
      }
      this.#starts[count] = start;
      this.#ends[count] = i;
      this.#kinds[count] = kind;
      this.#hashes[count] = kind === KIND_NUMBER ? NUMBER : fnv(text, start, i, FNV_OFFSET);
      // Token starts only grow: skip the merged spans that end before this one.
      while (next < inside.length && (inside[next + 1] ?? 0) <= start) next += 2;
      this.#quoted[count] = next < inside.length && start >= (inside[next] ?? 0) ? 1 : 0;
      this.#medical[count] =
        kind === KIND_WORD && i - start >= 4 && this.vocab.medical.hasRange(text, start, i) ? 1 : 0;
      count++;
    }
    let outer = 0;
    for (let t = 0; t < count; t++) if (this.#quoted[t] === 0) outer++;
    // Almost everything quoted: the quotes are the prompt, not a passage inside it.
    if (outer < MIN_OUTER_WORDS) this.#quoted.fill(0, 0, count);
    return count;
  }

  /** Character 3- to 5-grams of `^word$`. */
  #charGrams(text: string, start: number, end: number): void {
    const length = end - start;
    if (length > MAX_CHARGRAM_WORD) return;
    for (let from = -1; from <= length - 2; from++) {
      let h: number = NS.chars;
      for (let n = 0; n < 5; n++) {
        const at = from + n;
        if (at > length) break;
        const code = at < 0 ? 94 : at === length ? 36 : text.charCodeAt(start + at);
        h = fnvStep(h, code);
        if (n >= 2) this.#emit(combine(h, n));
        if (at === length) break;
      }
    }
  }

  /** A word-level feature: kept for the category model and the binary one. */
  #emitWord(hash: number): void {
    const word = hash & this.#wordMask;
    if (this.#wordStamp[word] !== this.#generation) {
      this.#wordStamp[word] = this.#generation;
      if (this.#wordCount === this.#words.length) this.#words = grow(this.#words);
      this.#words[this.#wordCount++] = word;
    }
    this.#emit(hash);
  }

  #emit(hash: number): void {
    const index = hash & this.#mask;
    if (this.#stamp[index] === this.#generation) return;
    this.#stamp[index] = this.#generation;
    if (this.#count === this.#out.length) this.#out = grow(this.#out);
    this.#out[this.#count++] = index;
  }
}

/** 0, 1, 2–3, 4–7, 8 and more. */
function bucket(count: number): number {
  return count === 0 ? 0 : Math.min(4, 32 - Math.clz32(count));
}

function grow(array: Uint32Array<ArrayBuffer>): Uint32Array<ArrayBuffer> {
  const bigger = new Uint32Array(array.length * 2);
  bigger.set(array);
  return bigger;
}

/**
 * Spans sorted by start, as the disjoint spans of their union: a position is inside one of them
 * exactly when it is inside one of these, which a walk in order of positions can test.
 */
function merged(spans: readonly number[]): readonly number[] {
  if (spans.length <= 2) return spans;
  const out: number[] = [spans[0] ?? 0, spans[1] ?? 0];
  for (let i = 2; i < spans.length; i += 2) {
    const start = spans[i] ?? 0;
    const end = spans[i + 1] ?? 0;
    if (start <= (out[out.length - 1] ?? 0)) out[out.length - 1] = Math.max(out[out.length - 1] ?? 0, end);
    else out.push(start, end);
  }
  return out;
}
