/**
 * A regular expression's source read into its parts, for the analyses that say what any match
 * must hold (`digit-floor.ts`: digits; `literal-floor.ts`: words). It reads the subset of
 * JavaScript's syntax the redactor's patterns are written in: alternatives, groups of every kind,
 * quantifiers, classes, escapes, anchors and back-references; anything else throws, so a pattern
 * it cannot read fails at load, not silently.
 */

/** One item of a class: a character, a range of them, or a class escape (`\d`, `\p{L}`). */
export type ClassItem =
  | { type: "char"; value: string }
  | { type: "range"; low: string; high: string }
  | { type: "escape"; letter: string };

export type Node =
  | { type: "sequence"; items: Node[] }
  | { type: "alternation"; options: Node[] }
  | { type: "repeat"; atom: Node; least: number; most: number }
  /** A group: capturing or not ("group"), a look-ahead or a look-behind, positive or negative. */
  | { type: "group"; kind: "group" | "ahead" | "behind" | "notAhead" | "notBehind"; inner: Node }
  /** One character, escapes resolved (`\.`, `\x60`, `\u00DF`, `\t`). */
  | { type: "char"; value: string }
  /** `[…]`; `items` empty with `negated` false matches nothing. */
  | { type: "class"; negated: boolean; items: ClassItem[] }
  /** A class escape outside a class (`\d`, `\w`, `\s`, `\p{Lu}`, their negations, `\cA`). */
  | { type: "escape"; letter: string }
  /** `\b` or `\B`. */
  | { type: "boundary" }
  /** `^` or `$`. */
  | { type: "anchor" }
  /** `.` */
  | { type: "any" }
  /** `\1`, `\k<name>`. */
  | { type: "backreference" };

function hex(digits: string): string {
  return String.fromCodePoint(Number.parseInt(digits, 16));
}

export function parseSource(source: string): Node {
  let at = 0;
  const fail = (what: string): never => {
    throw new Error(`regex source: ${what} at ${at} of ${source}`);
  };

  const alternation = (): Node => {
    const options = [sequence()];
    while (source[at] === "|") {
      at++;
      options.push(sequence());
    }
    return options.length === 1 ? (options[0] as Node) : { type: "alternation", options };
  };

  const sequence = (): Node => {
    const items: Node[] = [];
    while (at < source.length && source[at] !== "|" && source[at] !== ")") items.push(repeated(term()));
    return { type: "sequence", items };
  };

  /** An atom and the quantifier after it, if any (a lazy one's `?` is read and forgotten). */
  const repeated = (atom: Node): Node => {
    const head = source[at];
    let least: number;
    let most: number;
    if (head === "*") [least, most] = [0, Number.POSITIVE_INFINITY];
    else if (head === "+") [least, most] = [1, Number.POSITIVE_INFINITY];
    else if (head === "?") [least, most] = [0, 1];
    else if (head === "{") {
      const bounds = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(at));
      if (bounds === null) return atom;
      at += bounds[0].length - 1;
      least = Number(bounds[1]);
      most = bounds[2] === undefined ? least : bounds[3] === "" ? Number.POSITIVE_INFINITY : Number(bounds[3]);
    } else return atom;
    at++;
    if (source[at] === "?") at++;
    return { type: "repeat", atom, least, most };
  };

  const term = (): Node => {
    const head = source[at];
    if (head === "(") {
      at++;
      let kind: "group" | "ahead" | "behind" | "notAhead" | "notBehind" = "group";
      if (source[at] === "?") {
        const marker = source.slice(at, at + 3);
        if (marker.startsWith("?:")) at += 2;
        else if (marker.startsWith("?=")) [at, kind] = [at + 2, "ahead"];
        else if (marker.startsWith("?!")) [at, kind] = [at + 2, "notAhead"];
        else if (marker === "?<=") [at, kind] = [at + 3, "behind"];
        else if (marker === "?<!") [at, kind] = [at + 3, "notBehind"];
        else if (marker.startsWith("?<")) at = source.indexOf(">", at) + 1;
        else fail("an unsupported group");
      }
      const inner = alternation();
      if (source[at] !== ")") fail("an unbalanced group");
      at++;
      return { type: "group", kind, inner };
    }
    if (head === "[") return characterClass();
    if (head === "\\") return escaped();
    at++;
    if (head === "^" || head === "$") return { type: "anchor" };
    if (head === ".") return { type: "any" };
    return { type: "char", value: head as string };
  };

  /**
   * The escape at `at`, stepped over whole: a character it stands for, or the letter of a class
   * escape, a boundary or a back-reference.
   */
  const readEscape = (inClass: boolean): { char: string } | { letter: string } => {
    const letter = source[at + 1] as string;
    at += 2;
    if (letter === "x") {
      at += 2;
      return { char: hex(source.slice(at - 2, at)) };
    }
    if (letter === "u") {
      if (source[at] === "{") {
        const end = source.indexOf("}", at);
        const value = hex(source.slice(at + 1, end));
        at = end + 1;
        return { char: value };
      }
      at += 4;
      return { char: hex(source.slice(at - 4, at)) };
    }
    if (letter === "p" || letter === "P") {
      at = source.indexOf("}", at) + 1;
      return { letter };
    }
    if (letter === "c") {
      at += 1;
      return { letter };
    }
    if (!inClass && letter === "k") {
      at = source.indexOf(">", at) + 1;
      return { letter };
    }
    if (letter >= "0" && letter <= "9") {
      while ((source[at] ?? "") >= "0" && (source[at] ?? "") <= "9") at++;
      return { letter: "0" };
    }
    if ("dDwWsSbBfv".includes(letter)) return { letter };
    if (letter === "t") return { char: "\t" };
    if (letter === "n") return { char: "\n" };
    if (letter === "r") return { char: "\r" };
    // Any other escaped character is itself: `\.`, `\-`, `\/`, `\\`, `\(`.
    return { char: letter };
  };

  const escaped = (): Node => {
    const value = readEscape(false);
    if ("char" in value) return { type: "char", value: value.char };
    if (value.letter === "b" || value.letter === "B") return { type: "boundary" };
    if (value.letter === "k" || value.letter === "0") return { type: "backreference" };
    return { type: "escape", letter: value.letter };
  };

  const characterClass = (): Node => {
    at++;
    const negated = source[at] === "^";
    if (negated) at++;
    const items: ClassItem[] = [];
    const one = (): ClassItem => {
      if (source[at] !== "\\") return { type: "char", value: source[at++] as string };
      const value = readEscape(true);
      // Inside a class, "\b" is a backspace: an escape no analysis reads.
      return "char" in value ? { type: "char", value: value.char } : { type: "escape", letter: value.letter };
    };
    while (at < source.length && source[at] !== "]") {
      const low = one();
      if (source[at] === "-" && source[at + 1] !== "]" && source[at + 1] !== undefined) {
        at++;
        const high = one();
        if (low.type === "char" && high.type === "char")
          items.push({ type: "range", low: low.value, high: high.value });
        else items.push(low, { type: "char", value: "-" }, high);
        continue;
      }
      items.push(low);
    }
    if (source[at] !== "]") fail("an unterminated class");
    at++;
    return { type: "class", negated, items };
  };

  const node = alternation();
  if (at !== source.length) fail('an unbalanced ")"');
  return node;
}
