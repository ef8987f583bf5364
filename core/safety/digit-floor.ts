/**
 * The digits any match of a regular expression must contain, read from its source: how many in
 * all, and the longest run of them side by side. The redactor runs dozens of patterns that need
 * digits (a phone number ten, with a run of four; an SSN nine; a ZIP code a run of five); a
 * prompt with fewer digits, or no run as long, cannot match one, and the pattern is skipped
 * without a scan. Two in three prompts have fewer than four digits, and nine in ten no run of four.
 *
 * Both figures are lower bounds and err low wherever they cannot be sure. The count is of the
 * text from where a match starts: a look-ahead counts what it reads; negative look-arounds,
 * look-behinds and back-references count nothing. A character class counts only when every
 * character it matches is a digit (`\d`, `[0-9]`, `[1-9]`, `5`). Alternatives count their least,
 * a quantified atom its least repetition; an atom that may match nothing but non-digits breaks a
 * run. `test/core-redact.test.ts` checks both against every match every detector makes over the
 * corpus and over generated text.
 */

function isDigit(char: string | undefined): boolean {
  return char !== undefined && char >= "0" && char <= "9";
}

/**
 * What a part of a pattern guarantees. `consumed`: the fewest digits it matches itself. `read`: the
 * fewest digits in the text from where it starts, look-aheads included (`(?=[A-Z0-9]{0,24}\d{4})`
 * reads digits it does not consume). `only`: it matches nothing but digits (then `consumed` is its
 * least length). `prefix`, `suffix`, `run`: the digits side by side it surely starts with, ends
 * with, and holds somewhere.
 */
interface Floor {
  consumed: number;
  read: number;
  only: boolean;
  prefix: number;
  suffix: number;
  run: number;
}

/** A zero-width assertion (`\b`, `^`, a look-behind): nothing consumed, nothing broken. */
const EMPTY: Floor = { consumed: 0, read: 0, only: true, prefix: 0, suffix: 0, run: 0 };
/** Something that may match a non-digit: it breaks any run. */
const BREAK: Floor = { consumed: 0, read: 0, only: false, prefix: 0, suffix: 0, run: 0 };
const DIGIT: Floor = { consumed: 1, read: 1, only: true, prefix: 1, suffix: 1, run: 1 };

/** `a` followed by `b`. */
function then(a: Floor, b: Floor): Floor {
  return {
    consumed: a.consumed + b.consumed,
    read: Math.max(a.read, a.consumed + b.read),
    only: a.only && b.only,
    prefix: a.only ? a.consumed + b.prefix : a.prefix,
    suffix: b.only ? a.suffix + b.consumed : b.suffix,
    run: Math.max(a.run, b.run, a.suffix + b.prefix),
  };
}

/** `a` or `b`. */
function either(a: Floor, b: Floor): Floor {
  return {
    consumed: Math.min(a.consumed, b.consumed),
    read: Math.min(a.read, b.read),
    only: a.only && b.only,
    prefix: Math.min(a.prefix, b.prefix),
    suffix: Math.min(a.suffix, b.suffix),
    run: Math.min(a.run, b.run),
  };
}

export interface DigitFloor {
  /** The fewest digits in the text from where a match starts. */
  digits: number;
  /** The longest run of digits side by side a match surely holds. */
  run: number;
}

export function digitFloor(source: string): DigitFloor {
  let at = 0;

  const alternation = (): Floor => {
    let floor = sequence();
    while (source[at] === "|") {
      at++;
      floor = either(floor, sequence());
    }
    return floor;
  };

  const sequence = (): Floor => {
    let floor = EMPTY;
    while (at < source.length && source[at] !== "|" && source[at] !== ")") floor = then(floor, repeated(term()));
    return floor;
  };

  /** An atom with the quantifier after it, if any, repeated its least number of times. */
  const repeated = (atom: Floor): Floor => {
    const char = source[at];
    let least = 1;
    if (char === "*" || char === "?") least = 0;
    else if (char === "+") least = 1;
    else if (char === "{") {
      const bounds = /^\{(\d+)(?:,\d*)?\}/.exec(source.slice(at));
      if (bounds === null) return atom;
      at += bounds[0].length - 1;
      least = Number(bounds[1]);
    } else return atom;
    at++;
    if (source[at] === "?") at++;
    if (least === 0) return atom.only ? EMPTY : BREAK;
    let floor = atom;
    for (let k = 1; k < least; k++) floor = then(floor, atom);
    return floor;
  };

  const term = (): Floor => {
    const char = source[at];
    if (char === "(") {
      at++;
      // A group counts; a look-ahead reads without consuming; a negative look-around or a
      // look-behind (which reads before the match) is only an assertion.
      let kind: "group" | "ahead" | "assertion" = "group";
      if (source[at] === "?") {
        const head = source.slice(at, at + 3);
        if (head.startsWith("?:")) at += 2;
        else if (head.startsWith("?=")) {
          at += 2;
          kind = "ahead";
        } else if (head.startsWith("?!")) {
          at += 2;
          kind = "assertion";
        } else if (head === "?<=" || head === "?<!") {
          at += 3;
          kind = "assertion";
        } else if (head.startsWith("?<")) at = source.indexOf(">", at) + 1;
        else throw new Error(`digitFloor: unsupported group at ${at} of ${source}`);
      }
      const inner = alternation();
      if (source[at] !== ")") throw new Error(`digitFloor: unbalanced group in ${source}`);
      at++;
      if (kind === "group") return inner;
      return kind === "ahead" ? { ...EMPTY, read: inner.read, run: inner.run } : EMPTY;
    }
    if (char === "[") return characterClass() ? DIGIT : BREAK;
    if (char === "\\") return escaped();
    at++;
    if (char === "^" || char === "$") return EMPTY;
    return isDigit(char) ? DIGIT : BREAK;
  };

  /**
   * Steps over the escape at `at` whole (`\x39`, `\u{1F600}`, `\p{Lu}`, `\cA`; outside a class
   * also `\k<name>` and a back-reference's digits) and says which letter it was.
   */
  const skipEscape = (inClass: boolean): string | undefined => {
    const char = source[at + 1];
    at += 2;
    if (char === "x") at += 2;
    else if (char === "u") at = source[at] === "{" ? source.indexOf("}", at) + 1 : at + 4;
    else if (char === "p" || char === "P") at = source.indexOf("}", at) + 1;
    else if (char === "c") at += 1;
    else if (!inClass && char === "k") at = source.indexOf(">", at) + 1;
    else if (!inClass && isDigit(char)) while (isDigit(source[at])) at++;
    return char;
  };

  /** An escape outside a class: `\d` is a digit, `\b` and `\B` assert; the rest are skipped whole. */
  const escaped = (): Floor => {
    const char = skipEscape(false);
    if (char === "d") return DIGIT;
    return char === "b" || char === "B" ? EMPTY : BREAK;
  };

  /** `[…]`: whether everything it matches is a digit. */
  const characterClass = (): boolean => {
    at++;
    const negated = source[at] === "^";
    if (negated) at++;
    let onlyDigits = true;
    let empty = true;
    while (at < source.length && source[at] !== "]") {
      empty = false;
      if (source[at] === "\\") {
        if (skipEscape(true) !== "d") onlyDigits = false;
        continue;
      }
      const low = source[at];
      at++;
      if (source[at] === "-" && source[at + 1] !== "]" && source[at + 1] !== undefined) {
        at++;
        let high: string | undefined = source[at];
        if (high === "\\") {
          // An escaped range end (`\x39`): not worth reading, so not surely a digit.
          high = undefined;
          skipEscape(true);
        } else at++;
        if (!(isDigit(low) && isDigit(high))) onlyDigits = false;
        continue;
      }
      if (!isDigit(low)) onlyDigits = false;
    }
    if (source[at] !== "]") throw new Error(`digitFloor: unterminated class in ${source}`);
    at++;
    return !negated && !empty && onlyDigits;
  };

  const floor = alternation();
  if (at !== source.length) throw new Error(`digitFloor: unbalanced ")" in ${source}`);
  return { digits: floor.read, run: floor.run };
}

/** What `text` holds: its ASCII digits, and the longest run of them side by side. */
export function digitsOf(text: string): DigitFloor {
  let digits = 0;
  let run = 0;
  let current = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 48 && code <= 57) {
      digits++;
      if (++current > run) run = current;
    } else current = 0;
  }
  return { digits, run };
}
