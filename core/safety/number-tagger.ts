/**
 * The learned part of finding numbers: a logistic-regression tagger for a token with digits that
 * no rule of `redact.ts` claimed, kept or redacted. The rules find a number by its label ("MRN:",
 * "member id") or by a format only one kind has (an SSN, an MBI, a phone); what they leave is a
 * number whose label they do not know ("pid=9001247", "exp. 009912", "medcial recrod nmber
 * 4430-1192"), a number in a row beside a redacted name, a house number in a format of its own.
 * This decides those from what is around the token, the way the name tagger decides a word
 * (`name-tagger.ts`).
 *
 * A candidate is a run of letters and digits holding at least two digits, its parts joined by
 * single `- . / : # _` ("4430-1192", "MR/88/0041"), and digit groups joined by single spaces
 * ("8842 1093 00"); not a version's three or four short numbers joined by dots ("1.2.3", "10.4.12"),
 * which no one's date or record is written as (a dotted date has a four-digit year). Features: its shape, its length in digits, its letters before the first digit,
 * the character before and after it, the five words before it (by position for the nearest three,
 * and as a bag, whole and by their first four letters, which survive a typo's end) and the two
 * after, a placeholder among them read as a word ("[NAME] 0044-7712-9 [DATE]"). Only what lies
 * within `BEFORE` characters before and `AFTER` after is read, so a later pass, which rescans only
 * around new placeholders, decides a token as a whole-text pass would.
 *
 * Trained by `eval/safety/train-numbers.ts` on the training part of the redaction corpus, shipped
 * as `number-model.json`; the threshold is set by cross-validation with one writer held out at a
 * time, so that almost nothing a builder's prompt is made of is taken.
 */
import { fileURLToPath } from "node:url";
import * as v from "valibot";
import { decodeWeights, shipped } from "./shipped.ts";
import { combine, FNV_OFFSET, fnv, fnvStep } from "./hash.ts";

export const numberModelPath = fileURLToPath(new URL("./number-model.json", import.meta.url));

/** How far before and after a candidate its features read. */
export const BEFORE = 48;
export const AFTER = 24;

export interface NumberCandidate {
  start: number;
  end: number;
}

const isAlnum = (code: number) =>
  (code >= 48 && code <= 57) ||
  (code >= 65 && code <= 90) ||
  (code >= 97 && code <= 122) ||
  (code > 127 && /[\p{L}\p{N}]/u.test(String.fromCharCode(code)));
const isDigit = (code: number) => code >= 48 && code <= 57;
/** `-` `.` `/` `:` `#` `_`: what joins the parts of one token. */
const isJoiner = (code: number) =>
  code === 45 || code === 46 || code === 47 || code === 58 || code === 35 || code === 95;

const DIGIT = /\d/g;
/** A version: "1.2.3", "v10.4.12", "2.0.1.7". */
const VERSION = /^v?\d{1,3}(?:\.\d{1,3}){2,3}$/;

/** Every candidate of `text`, in order: see the module's comment. */
export function numberCandidates(text: string): NumberCandidate[] {
  const out: NumberCandidate[] = [];
  DIGIT.lastIndex = 0;
  for (let digit = DIGIT.exec(text); digit !== null; digit = DIGIT.exec(text)) {
    let start = digit.index;
    while (start > 0 && isAlnum(text.charCodeAt(start - 1))) start--;
    while (start > 1 && isJoiner(text.charCodeAt(start - 1)) && isAlnum(text.charCodeAt(start - 2))) {
      start -= 2;
      while (start > 0 && isAlnum(text.charCodeAt(start - 1))) start--;
    }
    let end = digit.index + 1;
    for (;;) {
      while (end < text.length && isAlnum(text.charCodeAt(end))) end++;
      if (end + 1 < text.length && isJoiner(text.charCodeAt(end)) && isAlnum(text.charCodeAt(end + 1))) end += 2;
      else if (
        end + 1 < text.length &&
        text.charCodeAt(end) === 32 &&
        isDigit(text.charCodeAt(end + 1)) &&
        isDigit(text.charCodeAt(end - 1))
      )
        end += 2;
      else break;
    }
    // Digit groups join across a space ("4421 8812"), a dotted part does not: "20 1.2.3" is a
    // number and a version, read one at a time.
    const joined = text.slice(start, end);
    if (joined.includes(" ") && joined.includes(".")) end = start + joined.indexOf(" ");
    DIGIT.lastIndex = end;
    let digits = 0;
    for (let k = start; k < end && digits < 2; k++) if (isDigit(text.charCodeAt(k))) digits++;
    if (digits >= 2 && !VERSION.test(text.slice(start, end))) out.push({ start, end });
  }
  return out;
}

/** Letters as X or x, runs of digits as 9 and their length (capped), the rest as itself. */
function shapeOf(token: string, lengths: boolean): string {
  let out = "";
  let run = 0;
  let last = 0;
  for (let k = 0; k <= token.length; k++) {
    const code = k < token.length ? token.charCodeAt(k) : -1;
    if (isDigit(code)) {
      run++;
      continue;
    }
    if (run > 0) {
      out += lengths ? `9${Math.min(run, 10)}` : "9";
      run = 0;
      last = 57;
    }
    if (code === -1) break;
    const upper =
      (code >= 65 && code <= 90) ||
      (code > 127 && String.fromCharCode(code) !== String.fromCharCode(code).toLowerCase());
    const lower =
      (code >= 97 && code <= 122) ||
      (code > 127 && String.fromCharCode(code) !== String.fromCharCode(code).toUpperCase());
    const mark = upper ? 88 : lower ? 120 : code;
    if (mark !== last || (mark !== 88 && mark !== 120)) out += String.fromCharCode(mark);
    last = mark;
  }
  return out.length > 24 ? out.slice(0, 24) : out;
}

const hash = (text: string) => fnv(text, 0, text.length, FNV_OFFSET);

/** Feature families: each hashes its own values apart from the others'. */
const F = {
  shape: hash("shape"),
  coarse: hash("coarse"),
  digits: hash("digits"),
  letters: hash("letters"),
  charBefore: hash("charBefore"),
  charAfter: hash("charAfter"),
  word0: hash("word0"),
  word1: hash("word1"),
  word2: hash("word2"),
  bag: hash("bag"),
  bagPrefix: hash("bagPrefix"),
  pair: hash("pair"),
  wordShape: hash("wordShape"),
  next0: hash("next0"),
  next1: hash("next1"),
  wordDigits: hash("wordDigits"),
  trigram: hash("trigram"),
  lead: hash("lead"),
  bias: hash("bias"),
};

const isSpace = (code: number) => code === 32 || code === 9 || code === 10 || code === 13;

/** A letter: ASCII by code, any other script's by its Unicode category. */
function isLetter(code: number): boolean {
  return (
    (code >= 97 && code <= 122) ||
    (code >= 65 && code <= 90) ||
    (code > 127 && /\p{L}/u.test(String.fromCharCode(code)))
  );
}

/** A character as the features read it: ASCII capitals in lower case, other scripts' by toLowerCase. */
function lowerCode(code: number): number {
  if (code >= 65 && code <= 90) return code + 32;
  return code > 127 ? String.fromCharCode(code).toLowerCase().charCodeAt(0) : code;
}

/** FNV-1a of text[from, to) in lower case, in place. */
function lowerHash(text: string, from: number, to: number): number {
  let h = FNV_OFFSET;
  for (let i = from; i < to; i++) h = fnvStep(h, lowerCode(text.charCodeAt(i)));
  return h;
}

/** Where the word that ends at `end` (exclusive) starts: letters and inner apostrophes, or a placeholder "[NAME]". */
function wordStart(text: string, end: number, floor: number): number {
  if (text.charCodeAt(end - 1) === 93) {
    let k = end - 2;
    while (k >= floor && ((text.charCodeAt(k) >= 65 && text.charCodeAt(k) <= 90) || text.charCodeAt(k) === 95)) k--;
    if (k >= floor && text.charCodeAt(k) === 91 && end - k >= 4) return k;
    return end - 1;
  }
  let k = end;
  while (
    k > floor &&
    (isLetter(text.charCodeAt(k - 1)) ||
      ((text.charCodeAt(k - 1) === 39 || text.charCodeAt(k - 1) === 8217) &&
        k - 1 > floor &&
        isLetter(text.charCodeAt(k - 2))))
  )
    k--;
  // A word starts with a letter.
  while (k < end && !isLetter(text.charCodeAt(k))) k++;
  return k;
}

/** Whether a word ends at `end`: a letter, or a placeholder's "]". */
const endsWord = (text: string, end: number) => {
  const code = text.charCodeAt(end - 1);
  return isLetter(code) || code === 93;
};

/**
 * Feature indices of the candidate at [start, end) of `text`, in a table of `2^bits` weights,
 * pushed onto `out` (scoring passes one array it empties each time: no array per token).
 */
export function numberFeatures(text: string, start: number, end: number, bits: number, out: number[] = []): number[] {
  const mask = (1 << bits) - 1;
  const f = (family: number, value: number) => combine(family, value) & mask;
  const token = text.slice(start, end);
  const coarse = hash(shapeOf(token, false));
  let digits = 0;
  let letters = 0;
  while (letters < token.length && !isDigit(token.charCodeAt(letters))) letters++;
  for (let k = 0; k < token.length; k++) if (isDigit(token.charCodeAt(k))) digits++;
  out.push(
    f(F.shape, hash(shapeOf(token, true))),
    f(F.coarse, coarse),
    f(F.digits, Math.min(digits, 16)),
    f(F.bias, 0),
  );
  if (letters > 0) out.push(f(F.letters, lowerHash(token, 0, letters)));
  const floor = Math.max(0, start - BEFORE);
  let last = start;
  while (last > floor && isSpace(text.charCodeAt(last - 1))) last--;
  out.push(f(F.charBefore, combine(last > floor ? text.charCodeAt(last - 1) : 0, last < start ? 1 : 0)));
  out.push(f(F.charAfter, text.charCodeAt(end) || 0));
  // The five words before, nearest first.
  const near: number[] = [];
  for (let at = start; at > floor && near.length < 5; ) {
    if (!endsWord(text, at)) {
      at--;
      continue;
    }
    const from = wordStart(text, at, floor);
    if (from >= at) {
      at--;
      continue;
    }
    const h = lowerHash(text, from, at);
    const n = near.length;
    near.push(h);
    if (n === 0) out.push(f(F.word0, h));
    else if (n === 1) out.push(f(F.word1, h));
    else if (n === 2) out.push(f(F.word2, h));
    out.push(f(F.bag, h));
    if (at - from > 4) out.push(f(F.bagPrefix, lowerHash(text, from, from + 4)));
    if (n === 0) for (let k = from; k + 3 <= at; k++) out.push(f(F.trigram, lowerHash(text, k, k + 3)));
    at = from;
  }
  out.push(f(F.wordDigits, combine(near[0] ?? 0, Math.min(digits, 12))));
  out.push(f(F.lead, combine(token.charCodeAt(letters) === 48 ? 1 : 0, letters > 0 ? 1 : 0)));
  out.push(f(F.pair, combine(near[0] ?? 0, near[1] ?? 0)));
  out.push(f(F.wordShape, combine(near[0] ?? 0, coarse)));
  // The two words after.
  const ceiling = Math.min(text.length, end + AFTER);
  for (let at = end, n = 0; at < ceiling && n < 2; ) {
    const code = text.charCodeAt(at);
    let to = at;
    if (code === 91) {
      to = at + 1;
      while (to < ceiling && ((text.charCodeAt(to) >= 65 && text.charCodeAt(to) <= 90) || text.charCodeAt(to) === 95))
        to++;
      if (to < ceiling && text.charCodeAt(to) === 93 && to - at >= 3) to++;
      else to = at;
    } else if (isLetter(code)) {
      while (
        to < ceiling &&
        (isLetter(text.charCodeAt(to)) ||
          ((text.charCodeAt(to) === 39 || text.charCodeAt(to) === 8217) && isLetter(text.charCodeAt(to + 1))))
      )
        to++;
    }
    if (to === at) {
      at++;
      continue;
    }
    out.push(f(n === 0 ? F.next0 : F.next1, lowerHash(text, at, to)));
    n++;
    at = to;
  }
  return out;
}

const modelSchema = v.object({
  format: v.literal(1),
  /** Hash of the training cases, the sources that decide the examples, and the settings. */
  version: v.string(),
  bits: v.number(),
  bias: v.number(),
  threshold: v.number(),
  scale: v.number(),
  weights: v.string(),
  trainedOn: v.object({ cases: v.number(), candidates: v.number(), identifiers: v.number() }),
  crossValidation: v.record(v.string(), v.number()),
});
export type NumberModelFile = v.InferOutput<typeof modelSchema>;

export class NumberTagger {
  /** 16-bit, as stored (see model.ts). */
  readonly #weights: Int16Array;
  readonly #features: number[] = [];

  constructor(readonly file: NumberModelFile) {
    this.#weights = decodeWeights(file.weights, 1 << file.bits, "number model");
  }

  /** Log-odds that the candidate at [start, end) of `text` is (part of) someone's identifier. */
  score(text: string, start: number, end: number): number {
    let sum = 0;
    const features = this.#features;
    features.length = 0;
    numberFeatures(text, start, end, this.file.bits, features);
    for (let i = 0; i < features.length; i++) sum += this.#weights[features[i] as number] ?? 0;
    return this.file.bias + sum * this.file.scale;
  }

  accepts(text: string, start: number, end: number): boolean {
    return this.score(text, start, end) >= this.file.threshold;
  }
}

const model = shipped(numberModelPath, (json) => new NumberTagger(v.parse(modelSchema, json)));

/** The shipped tagger, or null before one was trained (the rules still run). */
export function numberTagger(): NumberTagger | null {
  return model.get();
}

/** For the trainer: a model built in memory replaces the shipped one (null: none). */
export function useNumberTagger(tagger: NumberTagger | null): void {
  model.use(tagger);
}

export { modelSchema as numberModelSchema };
