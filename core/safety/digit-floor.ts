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
 * corpus and over generated text. The source is read by `regex-source.ts`, as `literal-floor.ts`'s.
 */

import { type ClassItem, type Node, parseSource } from "./regex-source.ts";

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
  const floor = floorOf(parseSource(source));
  return { digits: floor.read, run: floor.run };
}

/** A class that matches digits only: `\d`, `[0-9]`, `[1-9]`, `[5]`. */
function onlyDigits(items: readonly ClassItem[]): boolean {
  return (
    items.length > 0 &&
    items.every((item) =>
      item.type === "escape"
        ? item.letter === "d"
        : item.type === "char"
          ? isDigit(item.value)
          : isDigit(item.low) && isDigit(item.high),
    )
  );
}

function floorOf(node: Node): Floor {
  switch (node.type) {
    case "sequence":
      return node.items.reduce((floor, item) => then(floor, floorOf(item)), EMPTY);
    case "alternation":
      return node.options.map(floorOf).reduce(either);
    case "repeat": {
      // Repeated its least number of times.
      const atom = floorOf(node.atom);
      if (node.least === 0) return atom.only ? EMPTY : BREAK;
      let floor = atom;
      for (let k = 1; k < node.least; k++) floor = then(floor, atom);
      return floor;
    }
    case "group": {
      // A group counts; a look-ahead reads without consuming; a negative look-around or a
      // look-behind (which reads before the match) is only an assertion.
      const inner = floorOf(node.inner);
      if (node.kind === "group") return inner;
      return node.kind === "ahead" ? { ...EMPTY, read: inner.read, run: inner.run } : EMPTY;
    }
    case "char":
      return isDigit(node.value) ? DIGIT : BREAK;
    case "class":
      return !node.negated && onlyDigits(node.items) ? DIGIT : BREAK;
    case "escape":
      return node.letter === "d" ? DIGIT : BREAK;
    case "boundary":
    case "anchor":
      return EMPTY;
    case "any":
    case "backreference":
      return BREAK;
  }
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
