/**
 * Numbers read out, as dictation and speech-to-text write them: "six oh six harmon avenue", "one
 * two three dash four five dash six seven eight nine", "july four nineteen fifty two", "p o box
 * four four nine one". The redactor's detectors read digits; this writes the text over with each
 * run of three or more number words in digits ("606 harmon avenue", "123-45-6789", "july 4
 * 1952"), so the same detectors find what was said, and says where each character of the view
 * came from, so a span found in it covers the words that spelled it.
 *
 * How a run is read, the way people read numbers out: each word is its digits, side by side
 * ("two two one nine" is 2219, "nine eighty one" 981, "nineteen fifty two" 1952, "oh" is 0); a
 * tens word takes the unit after it ("twenty seven" is 27); "hundred" and "thousand" multiply what
 * is before them and add what follows ("four hundred twelve" is 412, "two thousand twelve" 2012);
 * "dash", "slash", "dot" and "point" are their marks. After a month's name, the first number is
 * the day and the rest the year ("march eleven twenty twenty five" is "march 11 2025").
 */

const UNITS: Readonly<Record<string, number>> = {
  zero: 0,
  oh: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
};
const TEENS: Readonly<Record<string, number>> = {
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
};
const TENS: Readonly<Record<string, number>> = {
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
};
const MARKS: Readonly<Record<string, string>> = { dash: "-", hyphen: "-", slash: "/", dot: ".", point: "." };

const NUMBER_WORD = `(?:${[...Object.keys(UNITS), ...Object.keys(TEENS), ...Object.keys(TENS), "hundred", "thousand"].join("|")})`;
const ITEM = String.raw`(?:${NUMBER_WORD}(?:-(?:${Object.keys(UNITS).join("|")}))?|\d{1,4}|${Object.keys(MARKS).join("|")})`;
/** A run of number words and short numbers, said one after another: spaces or commas between (a hyphen joins a tens word to its unit). */
const RUN = new RegExp(String.raw`(?<![\p{L}\d])${ITEM}(?:[ \t,]{1,3}${ITEM}){2,24}(?![\p{L}\d])`, "giu");
const MONTH_BEFORE =
  /\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)[ \t,]{1,3}$/i;
/** What a run must hold to be read: number words (a run of digits alone says nothing new). */
const HAS_WORD = new RegExp(`\\b${NUMBER_WORD}\\b`, "i");
/**
 * What every run holds: a number word beside another or beside a number, a few spaces, commas or
 * hyphens between. One test settles most texts (few hold a pair) before runs are looked for.
 */
const PAIR = new RegExp(
  String.raw`\b${NUMBER_WORD}[ \t,\-]{1,3}(?:${NUMBER_WORD}\b|\d)|\b\d{1,4}[ \t,\-]{1,3}${NUMBER_WORD}\b`,
  "i",
);

export interface SpokenView {
  /** The text with each run in digits. */
  text: string;
  /** Where view character i starts in the text; `origin[text.length]` is the text's length. */
  origin: number[];
  /** Where each run is in the view, to tell a span that reads one from any other. */
  runs: Array<readonly [number, number]>;
}

interface Item {
  word: string;
  start: number;
  end: number;
}

/** A run's items in digits: each value with where its words start in the text. */
function readRun(items: readonly Item[], monthBefore: boolean): Array<readonly [string, number]> {
  const out: Array<readonly [string, number]> = [];
  let i = 0;
  const valueAt = (k: number): number | undefined => {
    const word = items[k]?.word;
    if (word === undefined) return undefined;
    if (/^\d+$/.test(word)) return Number(word);
    const [head, tail] = word.split("-") as [string, string | undefined];
    const base = UNITS[head] ?? TEENS[head] ?? TENS[head];
    if (base === undefined) return undefined;
    return tail === undefined ? base : base + (UNITS[tail] ?? 0);
  };
  while (i < items.length) {
    const item = items[i] as Item;
    const mark = MARKS[item.word];
    if (mark !== undefined) {
      out.push([mark, item.start]);
      i++;
      continue;
    }
    let value = valueAt(i);
    if (value === undefined) {
      i++;
      continue;
    }
    let next = i + 1;
    const spokenAsDigits = /^\d+$/.test(item.word);
    // "twenty seven": a tens word takes the unit after it.
    if (!spokenAsDigits && TENS[item.word] !== undefined && UNITS[items[next]?.word ?? ""] !== undefined) {
      value += UNITS[items[next]?.word ?? ""] ?? 0;
      next++;
    }
    // "four hundred twelve", "two thousand twelve": the multiplier, then what follows it.
    for (const [word, times] of [
      ["hundred", 100],
      ["thousand", 1000],
    ] as const) {
      if (items[next]?.word !== word) continue;
      value *= times;
      next++;
      const rest = valueAt(next);
      if (rest !== undefined && rest < times && MARKS[items[next]?.word ?? ""] === undefined) {
        let add = rest;
        next++;
        if (TENS[items[next - 1]?.word ?? ""] !== undefined && UNITS[items[next]?.word ?? ""] !== undefined) {
          add += UNITS[items[next]?.word ?? ""] ?? 0;
          next++;
        }
        value += add;
      }
    }
    out.push([String(value), item.start]);
    // After a month's name the first number is its day: a space, then the year.
    if (monthBefore && out.length === 1 && next < items.length) out.push([" ", items[next]?.start ?? item.end]);
    i = next;
  }
  return out;
}

/** A number of two digits or more said as one: "eighty-five", "nineteen", "55". */
function isWhole(word: string): boolean {
  const head = word.split("-")[0] as string;
  return /^\d{2,}$/.test(word) || TEENS[head] !== undefined || TENS[head] !== undefined || head === "hundred";
}

/**
 * A run's items, cut where a comma stands beside a whole number: "seventy, eighty-five, sixty"
 * is a list of values, "three five, two nine nine one" one number read in groups. Each piece is
 * read when it still has three items and a word.
 */
function groups(text: string, match: RegExpExecArray): Item[][] {
  const items: Item[] = [];
  for (const word of match[0].matchAll(/[\p{L}\d]+(?:-[\p{L}]+)?/gu)) {
    const start = match.index + word.index;
    items.push({ word: word[0].toLowerCase(), start, end: start + word[0].length });
  }
  const pieces: Item[][] = [[]];
  items.forEach((item, k) => {
    const previous = items[k - 1];
    const listed =
      previous !== undefined &&
      text.slice(previous.end, item.start).includes(",") &&
      (isWhole(previous.word) || isWhole(item.word));
    if (listed) pieces.push([]);
    pieces[pieces.length - 1]?.push(item);
  });
  return pieces.filter((piece) => piece.length >= 3 && piece.some((item) => HAS_WORD.test(item.word)));
}

/** The last text read and its view: a redaction asks for a text's view more than once. */
let last: { text: string; view: SpokenView | null } | undefined;

/** The text with its spoken runs in digits, or null when it has none. */
export function spokenView(text: string): SpokenView | null {
  if (last?.text !== text) last = { text, view: readView(text) };
  return last.view;
}

function readView(text: string): SpokenView | null {
  if (!PAIR.test(text)) return null;
  let view = "";
  const origin: number[] = [];
  const runs: Array<readonly [number, number]> = [];
  let cursor = 0;
  RUN.lastIndex = 0;
  for (let match = RUN.exec(text); match !== null; match = RUN.exec(text)) {
    for (const items of groups(text, match)) {
      const first = items[0] as Item;
      const last = items[items.length - 1] as Item;
      for (let k = cursor; k < first.start; k++) {
        origin.push(k);
        view += text.charAt(k);
      }
      const from = view.length;
      const monthBefore = MONTH_BEFORE.test(text.slice(Math.max(0, first.start - 12), first.start));
      for (const [digits, start] of readRun(items, monthBefore)) {
        for (let k = 0; k < digits.length; k++) origin.push(start);
        view += digits;
      }
      runs.push([from, view.length]);
      cursor = last.end;
    }
  }
  if (runs.length === 0) return null;
  for (let k = cursor; k < text.length; k++) {
    origin.push(k);
    view += text.charAt(k);
  }
  origin.push(text.length);
  return { text: view, origin, runs };
}
