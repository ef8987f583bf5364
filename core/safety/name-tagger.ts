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
 * punctuation around it, and whether it starts a sentence. They are hashed into one table of
 * weights, trained by `eval/safety/train-names.ts` on the training part of the redaction corpus
 * and shipped as `name-model.json`.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as v from "valibot";
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
  /** Standing and case, as one small number: the same for "Grace" and "Hope". */
  kind: number;
  /** The punctuation before the token (see gapCode). */
  gap: number;
  sentenceStart: boolean;
}

const hash = (text: string) => fnv(text, 0, text.length, FNV_OFFSET);

/** Runs of capitals, small letters and digits as X, x and 9 ("Ji-hoon" → "Xx-x"), at most 6 marks. */
function shape(text: string): string {
  let out = "";
  let last = "";
  for (const char of text) {
    const lower = char.toLowerCase();
    const upper = char.toUpperCase();
    // Upper and lower case only: a titlecase letter ("ǅ") or a mark stays itself.
    const mark =
      char >= "0" && char <= "9"
        ? "9"
        : char === upper && char !== lower
          ? "X"
          : char === lower && char !== upper
            ? "x"
            : char;
    if (mark !== last || !(mark === "X" || mark === "x" || mark === "9")) {
      out += mark;
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

function describe(tokens: readonly TaggerToken[], i: number, standingOf: StandingOf): TokenFacts | undefined {
  const token = tokens[i];
  if (token === undefined) return undefined;
  if (token.tagger !== undefined) return token.tagger;
  const facts: TokenFacts = {
    word: hash(token.plain),
    kind: standingOf(token) * 4 + (token.allCaps ? 2 : token.capitalised ? 1 : 0),
    gap: gapCode(token.gap),
    sentenceStart: i === 0 || /[.!?\n]\s*["'“‘(]?\s*$|^\s*[-*•>]\s/.test(token.gap),
  };
  token.tagger = facts;
  return facts;
}

/** Feature families; each is a seed the values are hashed with. */
const F = Object.fromEntries(
  [
    "w",
    "sh",
    "st",
    "st+start",
    "len",
    "pre2",
    "pre3",
    "suf2",
    "suf3",
    "suf4",
    "med",
    "p1",
    "p2",
    "n1",
    "n2",
    "p1+st",
    "n1+st",
    "p1st",
    "n1st",
    "gb",
    "ga",
    "gb+st",
    "ga+st",
    "p1+gb",
    "n1+ga",
  ].map((name) => [name, hash(name)]),
) as Record<string, number>;

const BOUNDARY = hash("<edge>");
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
  const f = (family: string, a: number, b = 0) => combine(combine(F[family] as number, a), b) & mask;
  const prevWord = prev?.word ?? BOUNDARY;
  const nextWord = next?.word ?? BOUNDARY;
  const after = next?.gap ?? 1;
  return [
    f("w", own.word),
    f("sh", hash(shape(token.text))),
    f("st", own.kind),
    f("st+start", own.kind, own.sentenceStart ? 1 : 0),
    f("len", Math.min(n, 12)),
    f("pre2", part(0, 2)),
    f("pre3", part(0, 3)),
    f("suf2", part(n - 2, n)),
    f("suf3", part(n - 3, n)),
    f("suf4", part(n - 4, n)),
    f("med", medicalOf(token) ? 1 : 0, own.kind),
    f("p1", prevWord),
    f("p2", prev2?.word ?? BOUNDARY),
    f("n1", nextWord),
    f("n2", next2?.word ?? BOUNDARY),
    f("p1+st", prevWord, own.kind),
    f("n1+st", nextWord, own.kind),
    f("p1st", prev?.kind ?? NO_KIND),
    f("n1st", next?.kind ?? NO_KIND),
    f("gb", own.gap),
    f("ga", after),
    f("gb+st", own.gap, own.kind),
    f("ga+st", after, own.kind),
    f("p1+gb", prevWord, own.gap),
    f("n1+ga", nextWord, after),
  ];
}

const modelSchema = v.object({
  format: v.literal(1),
  /** Hash of the training cases, the vocabulary and the settings. */
  version: v.string(),
  bits: v.number(),
  bias: v.number(),
  threshold: v.number(),
  scale: v.number(),
  weights: v.string(),
  trainedOn: v.object({ cases: v.number(), tokens: v.number(), names: v.number() }),
  crossValidation: v.record(v.string(), v.number()),
});
export type NameModelFile = v.InferOutput<typeof modelSchema>;

export class NameTagger {
  readonly #weights: Float32Array;

  constructor(readonly file: NameModelFile) {
    const bytes = Buffer.from(file.weights, "base64");
    const quantized = new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
    if (quantized.length !== 1 << file.bits) throw new Error("name model: table size does not match its bits");
    this.#weights = Float32Array.from(quantized, (q) => q * file.scale);
  }

  /** Log-odds that token `i` is part of a person's name. */
  score(tokens: readonly TaggerToken[], i: number, standingOf: StandingOf, medicalOf: MedicalOf): number {
    let z = this.file.bias;
    for (const index of tokenFeatures(tokens, i, this.file.bits, standingOf, medicalOf)) z += this.#weights[index] ?? 0;
    return z;
  }
}

let loaded: NameTagger | null | undefined;

/** The shipped tagger, or null before one was trained (the rules still run). */
export function nameTagger(): NameTagger | null {
  if (loaded === undefined) {
    try {
      loaded = new NameTagger(v.parse(modelSchema, JSON.parse(readFileSync(nameModelPath, "utf8"))));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      loaded = null;
    }
  }
  return loaded;
}

/** For the trainer: a model built in memory replaces the shipped one. */
export function useNameTagger(tagger: NameTagger | null): void {
  loaded = tagger;
}

export { modelSchema as nameModelSchema };
