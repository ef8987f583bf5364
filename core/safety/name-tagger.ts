/**
 * The learned part of name finding: a logistic-regression token tagger, the way statistical NER
 * taggers decide "is this word part of a person's name" from the word and its neighbours. The
 * rules of `names.ts` find names that have a cue or two list-backed words; this finds the rest
 * from what no list holds: a first name as the subject of a sentence ("Oluwaseun and I tested…"),
 * after a verb of addressing ("ping aditi", "escalated to Kwame"), in a chat log ("[10:43]
 * marcus:"), a surname in capitals after a title, names that are also words ("Hope said…").
 *
 * Features of a token: the word itself, its shape, its prefixes and suffixes (they carry much of
 * a name's culture: -enko, -emeka, -sdóttir), its standing in the vocabularies, the words and
 * punctuation around it and their endings ("Wanjiru tests…", "Hiroshi tried…": a verb's -s, -ed),
 * whether it starts a sentence, and how the prompt writes the same word elsewhere (in lower case,
 * a common word; capitalised mid-sentence, more likely a name). They are hashed into one table of
 * weights, trained by `eval/safety/train-names.ts` on the training part of the redaction corpus
 * and shipped as `name-model.json`, with a threshold per candidate group (case, and whether a list
 * knows the word as a name), each set by cross-validation with one writer held out at a time.
 */
import { fileURLToPath } from "node:url";
import * as v from "valibot";
import { decodeWeights, shipped } from "./shipped.ts";
import { combine, FNV_OFFSET, fnv } from "./hash.ts";

export const nameModelPath = fileURLToPath(new URL("./name-model.json", import.meta.url));

/** What the tagger needs of a token (names.ts's tokens have it). */
export interface TaggerToken {
  text: string;
  /** Lower case, no apostrophes. */
  plain: string;
  capitalised: boolean;
  allCaps: boolean;
  /** What separates the token from the previous one. */
  gap: string;
  /** Filled in by the tagger the first time it looks at the token (see `describe`). */
  tagger?: TokenFacts;
}

/** 0 strong name, 1 name that is also a word, 2 unknown, 3 no name (see names.ts). */
export type StandingOf = (token: TaggerToken) => number;
export type MedicalOf = (token: TaggerToken) => boolean;

/** What the features read of a neighbour, computed once per token and kept on it. */
interface TokenFacts {
  word: number;
  /** Standing and case (lower, capitalised, capitals, no case), as one small number: the same for "Grace" and "Hope". */
  kind: number;
  /** The punctuation before the token (see gapCode). */
  gap: number;
  sentenceStart: boolean;
}

const hash = (text: string) => fnv(text, 0, text.length, FNV_OFFSET);

/** Runs of capitals, small letters, letters without case and digits as X, x, L and 9 ("Ji-hoon" → "Xx-x"), at most 6 marks. */
function shape(text: string): string {
  // Plain ASCII, most words, by code: the same marks without a string per character.
  if (/^[\x00-\x7f]*$/.test(text)) return asciiShape(text);
  let out = "";
  let last = "";
  for (const char of text) {
    const lower = char.toLowerCase();
    const upper = char.toUpperCase();
    // Upper and lower case only: a titlecase letter ("ǅ") or a mark stays itself.
    // A letter of a script without case (Arabic, Devanagari, Hangul, Thai…) is "L", whatever the script.
    const mark =
      char >= "0" && char <= "9"
        ? "9"
        : char === upper && char !== lower
          ? "X"
          : char === lower && char !== upper
            ? "x"
            : char > "\x7f" && /\p{L}/u.test(char)
              ? "L"
              : char;
    if (mark !== last || !(mark === "X" || mark === "x" || mark === "9" || mark === "L")) {
      out += mark;
      if (out.length === 6) break;
    }
    last = mark;
  }
  return out;
}

/** `shape` of an ASCII word: "X" for a capital, "x" a small letter, "9" a digit, runs of one mark as one. */
function asciiShape(text: string): string {
  let out = "";
  let last = -1;
  for (let k = 0; k < text.length; k++) {
    const code = text.charCodeAt(k);
    const mark = code >= 48 && code <= 57 ? 57 : code >= 65 && code <= 90 ? 88 : code >= 97 && code <= 122 ? 120 : code;
    if (mark !== last || !(mark === 88 || mark === 120 || mark === 57)) {
      out += String.fromCharCode(mark);
      if (out.length === 6) break;
    }
    last = mark;
  }
  return out;
}

/** The punctuation of a gap, without its spaces: "", ",", ":", ".", a line break, "(", "'" … */
function gapCode(gap: string | undefined): number {
  if (gap === undefined) return 1;
  let marks = "";
  for (const char of gap) {
    if (char === "\n") return 2;
    if (char !== " " && char !== "\t" && marks.length < 3) marks += char;
  }
  return marks.length === 0 ? 3 : hash(marks);
}

/** A word of a script without case: its case says nothing, unlike a lower-case Latin word's. */
function caseless(text: string): boolean {
  return text.charCodeAt(0) > 127 && text.toLowerCase() === text.toUpperCase();
}

function describe(tokens: readonly TaggerToken[], i: number, standingOf: StandingOf): TokenFacts | undefined {
  const token = tokens[i];
  if (token === undefined) return undefined;
  if (token.tagger !== undefined) return token.tagger;
  const facts: TokenFacts = {
    word: hash(token.plain),
    kind: standingOf(token) * 4 + (token.allCaps ? 2 : token.capitalised ? 1 : caseless(token.text) ? 3 : 0),
    gap: gapCode(token.gap),
    sentenceStart: i === 0 || endsSentence(token.gap),
  };
  token.tagger = facts;
  return facts;
}

/** Feature families; each is a seed the values are hashed with (named fields: no keyed lookup per feature). */
const F = {
  w: hash("w"),
  sh: hash("sh"),
  st: hash("st"),
  st_start: hash("st+start"),
  len: hash("len"),
  pre2: hash("pre2"),
  pre3: hash("pre3"),
  suf2: hash("suf2"),
  suf3: hash("suf3"),
  suf4: hash("suf4"),
  med: hash("med"),
  p1: hash("p1"),
  p2: hash("p2"),
  n1: hash("n1"),
  n2: hash("n2"),
  p1_st: hash("p1+st"),
  n1_st: hash("n1+st"),
  p1st: hash("p1st"),
  n1st: hash("n1st"),
  gb: hash("gb"),
  ga: hash("ga"),
  gb_st: hash("gb+st"),
  ga_st: hash("ga+st"),
  p1_gb: hash("p1+gb"),
  n1_ga: hash("n1+ga"),
  doc: hash("doc"),
  doc_st: hash("doc+st"),
  n1suf: hash("n1suf"),
  p1suf: hash("p1suf"),
  start_n1suf: hash("start+n1suf"),
  n1suf_st: hash("n1suf+st"),
} as const;

const BOUNDARY = hash("<edge>");

/** Whether a gap ends a sentence: the next word is capitalised whatever it is. */
const SENTENCE_GAP = /[.!?\n]\s*["'“‘(]?\s*$|^\s*[-*•>]\s/;

/** `SENTENCE_GAP`, with the gap of most words (one space, which it does not match) answered at once. */
function endsSentence(gap: string): boolean {
  return gap !== " " && SENTENCE_GAP.test(gap);
}

/**
 * How each word is written across the whole prompt, as bits: 1 in lower case somewhere ("will"
 * beside "Will"), 2 capitalised in the middle of a sentence, 4 more than once. A word a writer
 * also types in lower case is rarely a name; one capitalised mid-sentence often is.
 */
const usage = new WeakMap<readonly TaggerToken[], Map<string, number>>();

function usageBit(tokens: readonly TaggerToken[], k: number): number {
  const token = tokens[k] as TaggerToken;
  return token.capitalised ? (k > 0 && !endsSentence(token.gap) ? 2 : 0) : 1;
}

/** Tokens up to which a word's usage is counted where it is asked for, not mapped for all words. */
const SCANNED_USAGE = 96;

function usageOf(tokens: readonly TaggerToken[], plain: string): number {
  // A short prompt scores a few words: a pass over its tokens for each costs less than a map.
  if (tokens.length <= SCANNED_USAGE) {
    let bits = 0;
    let count = 0;
    for (let k = 0; k < tokens.length; k++) {
      if ((tokens[k] as TaggerToken).plain !== plain) continue;
      bits |= usageBit(tokens, k);
      count++;
    }
    return count > 1 ? bits | 4 : bits;
  }
  let map = usage.get(tokens);
  if (map === undefined) {
    map = new Map();
    for (let k = 0; k < tokens.length; k++) {
      const token = tokens[k] as TaggerToken;
      const seen = map.get(token.plain);
      const bit = usageBit(tokens, k);
      map.set(token.plain, seen === undefined ? bit : seen | bit | 4);
    }
    usage.set(tokens, map);
  }
  return map.get(plain) ?? 0;
}

/** The last two letters of a neighbour in lower case, with its case: "says" → s+"ys". */
function endingOf(token: TaggerToken | undefined): number {
  if (token === undefined) return BOUNDARY;
  const { plain } = token;
  return combine(fnv(plain, Math.max(0, plain.length - 2), plain.length, FNV_OFFSET), token.capitalised ? 1 : 0);
}
/** Neighbours' kind when there is none. */
const NO_KIND = 99;

/**
 * Feature indices of token `i`, in a table of `2^bits` weights. The same function serves training
 * and scoring; values are hashed in place and combined, so scoring builds no strings.
 */
export function tokenFeatures(
  tokens: readonly TaggerToken[],
  i: number,
  bits: number,
  standingOf: StandingOf,
  medicalOf: MedicalOf,
): number[] {
  const token = tokens[i] as TaggerToken;
  const own = describe(tokens, i, standingOf) as TokenFacts;
  const prev = describe(tokens, i - 1, standingOf);
  const prev2 = describe(tokens, i - 2, standingOf);
  const next = describe(tokens, i + 1, standingOf);
  const next2 = describe(tokens, i + 2, standingOf);
  // The word's own make-up, read only for the word being scored.
  const { plain } = token;
  const n = plain.length;
  const part = (from: number, to: number) => fnv(plain, Math.max(0, from), Math.min(n, to), FNV_OFFSET);
  const mask = (1 << bits) - 1;
  const f = (family: number, a: number, b = 0) => combine(combine(family, a), b) & mask;
  const prevWord = prev?.word ?? BOUNDARY;
  const nextWord = next?.word ?? BOUNDARY;
  const after = next?.gap ?? 1;
  // Its own occurrence counts once: only what the rest of the prompt adds.
  const doc = usageOf(tokens, plain) & (own.sentenceStart || !token.capitalised ? 7 : 5);
  const nextEnding = endingOf(tokens[i + 1]);
  return [
    f(F.w, own.word),
    f(F.sh, hash(shape(token.text))),
    f(F.st, own.kind),
    f(F.st_start, own.kind, own.sentenceStart ? 1 : 0),
    f(F.len, Math.min(n, 12)),
    f(F.pre2, part(0, 2)),
    f(F.pre3, part(0, 3)),
    f(F.suf2, part(n - 2, n)),
    f(F.suf3, part(n - 3, n)),
    f(F.suf4, part(n - 4, n)),
    f(F.med, medicalOf(token) ? 1 : 0, own.kind),
    f(F.p1, prevWord),
    f(F.p2, prev2?.word ?? BOUNDARY),
    f(F.n1, nextWord),
    f(F.n2, next2?.word ?? BOUNDARY),
    f(F.p1_st, prevWord, own.kind),
    f(F.n1_st, nextWord, own.kind),
    f(F.p1st, prev?.kind ?? NO_KIND),
    f(F.n1st, next?.kind ?? NO_KIND),
    f(F.gb, own.gap),
    f(F.ga, after),
    f(F.gb_st, own.gap, own.kind),
    f(F.ga_st, after, own.kind),
    f(F.p1_gb, prevWord, own.gap),
    f(F.n1_ga, nextWord, after),
    f(F.doc, doc),
    f(F.doc_st, doc, own.kind),
    f(F.n1suf, nextEnding),
    f(F.p1suf, endingOf(tokens[i - 1])),
    f(F.start_n1suf, nextEnding, own.sentenceStart ? 1 : 0),
    f(F.n1suf_st, nextEnding, own.kind),
  ];
}

/** How many candidate groups `candidateGroup` tells apart. */
export const CANDIDATE_GROUPS = 8;

/**
 * A candidate's group, for a threshold of its own: its case (lower, capitalised, capitals, no
 * case) and whether a list knows it as a name. A known name in lower case ("dana") and an
 * unknown capitalised word ("Chidi") are wrong at different rates at the same score.
 */
export function candidateGroup(tokens: readonly TaggerToken[], i: number, standingOf: StandingOf): number {
  const kind = (describe(tokens, i, standingOf) as TokenFacts).kind;
  return (kind % 4) * 2 + (kind >= 8 ? 1 : 0);
}

const modelSchema = v.object({
  format: v.literal(1),
  /** Hash of the training cases, the vocabulary and the settings. */
  version: v.string(),
  bits: v.number(),
  bias: v.number(),
  threshold: v.number(),
  /** A threshold per candidate group (see candidateGroup), where cross-validation could set one. */
  groupThresholds: v.optional(v.array(v.number())),
  scale: v.number(),
  weights: v.string(),
  trainedOn: v.object({ cases: v.number(), tokens: v.number(), names: v.number() }),
  crossValidation: v.record(v.string(), v.number()),
});
export type NameModelFile = v.InferOutput<typeof modelSchema>;

export class NameTagger {
  /** 16-bit, as stored: half the cache a float table would take (see model.ts). */
  readonly #weights: Int16Array;

  constructor(readonly file: NameModelFile) {
    this.#weights = decodeWeights(file.weights, 1 << file.bits, "name model");
  }

  /** Whether token `i` is taken for part of a name: its score against its group's threshold. */
  accepts(tokens: readonly TaggerToken[], i: number, standingOf: StandingOf, medicalOf: MedicalOf): boolean {
    const groups = this.file.groupThresholds;
    const threshold =
      groups === undefined
        ? this.file.threshold
        : (groups[candidateGroup(tokens, i, standingOf)] ?? this.file.threshold);
    return this.score(tokens, i, standingOf, medicalOf) >= threshold;
  }

  /** Log-odds that token `i` is part of a person's name. */
  score(tokens: readonly TaggerToken[], i: number, standingOf: StandingOf, medicalOf: MedicalOf): number {
    let sum = 0;
    for (const index of tokenFeatures(tokens, i, this.file.bits, standingOf, medicalOf))
      sum += this.#weights[index] ?? 0;
    return this.file.bias + sum * this.file.scale;
  }
}

const model = shipped(nameModelPath, (json) => new NameTagger(v.parse(modelSchema, json)));

/** The shipped tagger, or null before one was trained (the rules still run). */
export function nameTagger(): NameTagger | null {
  return model.get();
}

/** For the trainer: a model built in memory replaces the shipped one (null: none). */
export function useNameTagger(tagger: NameTagger | null): void {
  model.use(tagger);
}

export { modelSchema as nameModelSchema };
