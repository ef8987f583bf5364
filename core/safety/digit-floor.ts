/**
 * The fewest ASCII digits any match of a regular expression can contain, read from its source.
 * The redactor runs dozens of patterns that each need several digits (a phone number ten, an SSN
 * nine, a date three); a prompt with fewer digits in all than a pattern needs cannot match it, so
 * the pattern is skipped without a scan. Two in three prompts have fewer than four digits.
 *
 * The count is a lower bound on the digits of the text from where a match starts, and errs low
 * wherever it cannot be sure: a look-ahead counts what it reads, but negative look-arounds,
 * look-behinds and back-references count nothing, and a character class counts only when every
 * character it matches is a digit (`\d`, `[0-9]`, `[1-9]`, `5`). Alternatives count their
 * smallest, a quantified atom its least repetition. `test/core-redact.test.ts` checks it against every match
 * every detector makes over the corpus.
 */

function isDigit(char: string | undefined): boolean {
  return char !== undefined && char >= "0" && char <= "9";
}

/**
 * What a part of a pattern guarantees: `consumed`, the fewest digits it matches itself; `read`,
 * the fewest digits in the text from where it starts, look-aheads included (a look-ahead reads
 * digits it does not consume: `(?=[A-Z0-9]{0,24}\d{4})`).
 */
interface Floor {
  consumed: number;
  read: number;
}

const NONE: Floor = { consumed: 0, read: 0 };

export function minDigits(source: string): number {
  let at = 0;

  /** `a|b|c`: the least of its alternatives. */
  const alternation = (): Floor => {
    let least = sequence();
    while (source[at] === "|") {
      at++;
      const next = sequence();
      least = { consumed: Math.min(least.consumed, next.consumed), read: Math.min(least.read, next.read) };
    }
    return least;
  };

  /** Atoms one after another: what they consume adds up; what one reads adds to what those before it consumed. */
  const sequence = (): Floor => {
    let consumed = 0;
    let read = 0;
    while (at < source.length && source[at] !== "|" && source[at] !== ")") {
      const atom = repeated(term());
      read = Math.max(read, consumed + atom.read);
      consumed += atom.consumed;
    }
    return { consumed, read: Math.max(read, consumed) };
  };

  /** An atom with the quantifier after it, if any: its least repetition, the last one reading on. */
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
    if (least === 0) return NONE;
    return { consumed: least * atom.consumed, read: (least - 1) * atom.consumed + atom.read };
  };

  const term = (): Floor => {
    const char = source[at];
    if (char === "(") {
      at++;
      // A capturing or non-capturing group counts; a look-ahead reads without consuming; a
      // negative look-around or a look-behind (which reads before the match) counts nothing.
      let kind: "group" | "ahead" | "none" = "group";
      if (source[at] === "?") {
        const head = source.slice(at, at + 3);
        if (head.startsWith("?:")) at += 2;
        else if (head.startsWith("?=")) {
          at += 2;
          kind = "ahead";
        } else if (head.startsWith("?!")) {
          at += 2;
          kind = "none";
        } else if (head === "?<=" || head === "?<!") {
          at += 3;
          kind = "none";
        } else if (head.startsWith("?<")) at = source.indexOf(">", at) + 1;
        else throw new Error(`minDigits: unsupported group at ${at} of ${source}`);
      }
      const inner = alternation();
      if (source[at] !== ")") throw new Error(`minDigits: unbalanced group in ${source}`);
      at++;
      if (kind === "group") return inner;
      return kind === "ahead" ? { consumed: 0, read: inner.read } : NONE;
    }
    let digit: boolean;
    if (char === "[") digit = characterClass();
    else if (char === "\\") digit = escaped();
    else {
      at++;
      digit = isDigit(char);
    }
    return digit ? { consumed: 1, read: 1 } : NONE;
  };

  /** An escape outside a class: only `\d` is surely a digit; the rest are skipped whole. */
  const escaped = (): boolean => {
    const char = source[at + 1];
    at += 2;
    if (char === "d") return true;
    if (char === "x") at += 2;
    else if (char === "u") at = source[at] === "{" ? source.indexOf("}", at) + 1 : at + 4;
    else if (char === "p" || char === "P") at = source.indexOf("}", at) + 1;
    else if (char === "k") at = source.indexOf(">", at) + 1;
    else if (char === "c") at += 1;
    else if (isDigit(char)) while (isDigit(source[at])) at++;
    return false;
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
        const char = source[at + 1];
        at += 2;
        if (char === "d") continue;
        onlyDigits = false;
        if (char === "x") at += 2;
        else if (char === "u") at = source[at] === "{" ? source.indexOf("}", at) + 1 : at + 4;
        else if (char === "p" || char === "P") at = source.indexOf("}", at) + 1;
        else if (char === "c") at += 1;
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
          const char = source[at + 1];
          at += 2;
          if (char === "x") at += 2;
          else if (char === "u") at = source[at] === "{" ? source.indexOf("}", at) + 1 : at + 4;
        } else at++;
        if (!(isDigit(low) && isDigit(high))) onlyDigits = false;
        continue;
      }
      if (!isDigit(low)) onlyDigits = false;
    }
    if (source[at] !== "]") throw new Error(`minDigits: unterminated class in ${source}`);
    at++;
    return !negated && !empty && onlyDigits;
  };

  const floor = alternation();
  if (at !== source.length) throw new Error(`minDigits: unbalanced ")" in ${source}`);
  return floor.read;
}

/** How many ASCII digits `text` holds, counting no further than `enough`. */
export function digitsIn(text: string, enough = Number.POSITIVE_INFINITY): number {
  let count = 0;
  for (let i = 0; i < text.length && count < enough; i++) {
    const code = text.charCodeAt(i);
    if (code >= 48 && code <= 57) count++;
  }
  return count;
}
