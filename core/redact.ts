/**
 * Redaction of the HIPAA Safe Harbor identifiers (45 CFR 164.514(b)(2)) that can appear in the
 * free text of a builder's prompt. Each one becomes a typed placeholder such as `[SSN]`, so the
 * planner still knows something was there without ever seeing it.
 *
 * Design:
 * - Detectors run in priority order: self-delimiting formats that can contain label-like text
 *   (URLs, emails, IP addresses), then labelled values, then formats that speak for themselves
 *   (SSN, phone, ZIP+4, street address, dates), then names. A later detector never claims
 *   characters an earlier one took.
 * - A label stays and only its value is replaced: `MRN: 12345678` → `MRN: [MRN]`, `Dr. Jane
 *   Smith` → `Dr. [NAME]`. Placeholders contain no digit, `@`, `/` or lower-case letter, so no
 *   detector matches one, and `redact` repeats until a pass finds nothing: it is idempotent.
 * - Every quantifier is bounded, so the cost stays linear in the text's length (no catastrophic
 *   backtracking on hostile input).
 * - Speed on the common, clean prompt: the regex engine is fast when a pattern starts with a
 *   rare character (a digit, a capital) and slow when it starts with any word. So patterns start
 *   with a digit or a capital and look behind for their context; labelled values are found from
 *   the few digit runs backwards; and each detector has a guard (a digit, an `@`, a `/`, colons)
 *   that skips it when it cannot match.
 * - Bare numbers of ordinary builder text are left alone ("3 steps", "20 per minute", "v0",
 *   "1.2.3", "port 3000", "127.0.0.1"); a 5-digit ZIP, a 9-digit SSN or an ID counts only next to
 *   its label or a state, because unlabelled they are indistinguishable from configuration.
 */

export const identifierKinds = [
  "name",
  "ssn",
  "mrn",
  "dob",
  "date",
  "age",
  "phone",
  "fax",
  "email",
  "address",
  "zip",
  "member_id",
  "account",
  "license",
  "device_id",
  "vehicle",
  "ip",
  "url",
] as const;
export type IdentifierKind = (typeof identifierKinds)[number];

export interface IdentifierSpan {
  kind: IdentifierKind;
  /** Offset of the first redacted character. */
  start: number;
  /** Offset just past the last redacted character. */
  end: number;
}

/** `[SSN]`, `[MEMBER_ID]`, …: upper case and underscores only, so nothing redacts them again. */
export function placeholder(kind: IdentifierKind): string {
  return `[${kind.toUpperCase()}]`;
}

// ---------------------------------------------------------------------------------------------
// Building blocks. Every quantifier is bounded.

/** Between a label and its value: spaces, `:`, `#`, `=`, "is", "no.", at most three of them. */
const SEP = String.raw`(?:\s{0,3}(?:[:#=\-–]|is\b|was\b|no\b\.?|number\b|num\b\.?|nbr\b)){0,3}\s{0,3}`;
/** A label suffix: "member id", "member #", "member number", "member no." */
const NO = String.raw`(?:\s{0,2}(?:id|#|number|no\.?|num\.?|nbr))`;
/** An identifier value: letters, digits and dashes, with at least one digit. */
const ID = String.raw`(?=[A-Za-z0-9\-]{0,63}\d)[A-Za-z0-9][A-Za-z0-9\-]{2,63}(?![\w\-])`;

const MONTH = `(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)`;
const ORD = `(?:st|nd|rd|th)?`;
/** Numeric dates must carry a year; dotted ones a 4-digit one, so "1.2.24" stays a version. */
const NUMERIC_DATES = [
  String.raw`\d{1,2}[/\-]\d{1,2}[/\-](?:\d{4}|\d{2})(?!\d)`,
  String.raw`\d{1,2}\.\d{1,2}\.\d{4}(?!\d)`,
  String.raw`\d{4}[/\-]\d{1,2}[/\-]\d{1,2}(?!\d)`,
];
/** Written dates with a day, starting with the day or with a digit. */
const DAY_FIRST_DATES = [
  String.raw`\d{1,2}${ORD}\s{1,3}(?:of\s{1,3})?${MONTH}\.?,?\s{1,3}\d{4}(?!\d)`,
  String.raw`\d{1,2}${ORD}\s{1,3}(?:of\s{1,3})?${MONTH}\b\.?`,
];
const MONTH_FIRST_DATES = [
  String.raw`${MONTH}\.?\s{1,3}\d{1,2}${ORD},?\s{1,3}\d{4}(?!\d)`,
  String.raw`${MONTH}\.?\s{1,3}\d{1,2}${ORD}(?![\w:])`,
];
/** After a DOB label anything date-like counts: a bare year, 19800314, 3.14.80. */
const DOB_VALUE = `(?:${[
  ...MONTH_FIRST_DATES,
  String.raw`${MONTH}\.?,?\s{1,3}\d{4}(?!\d)`,
  ...DAY_FIRST_DATES,
  String.raw`\d{1,2}[/.\-]\d{1,2}[/.\-](?:\d{4}|\d{2})(?!\d)`,
  String.raw`\d{4}[/.\-]\d{1,2}[/.\-]\d{1,2}(?!\d)`,
  String.raw`\d{8}(?!\d)`,
  String.raw`\d{6}(?!\d)`,
  String.raw`\d{4}(?!\d)`,
].join("|")})`;

const EXTENSION = String.raw`(?:\s{0,2}(?:x|ext\.?|extension)\s{0,2}\d{1,6})?`;
const US_PHONE = String.raw`(?:\+?1[\s.\-]?)?(?:\(\d{3}\)\s?|\d{3}[\s.\-]?)\d{3}[\s.\-]?\d{4}${EXTENSION}`;

const STATES = `(?:A[KLRZ]|C[AOT]|D[CE]|FL|GA|HI|I[ADLN]|K[SY]|LA|M[ADEINOST]|N[CDEHJMVY]|O[HKR]|P[AR]|RI|S[CD]|T[NX]|UT|V[AIT]|W[AIVY])`;

const STREET_SUFFIX = `(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Ter|Circle|Cir|Parkway|Pkwy|Highway|Hwy|Square|Sq|Trail|Trl|Plaza|Plz|Alley|Crescent|Pike|STREET|ST|AVE|RD|BLVD|LN|DR)`;
const UNIT = String.raw`(?:,?\s{1,3}(?:Apt|Apartment|Suite|Ste|Unit|Bldg|Building|Floor|Fl|Room|Rm|#)\.?\s{0,3}#?\s{0,2}[A-Za-z0-9\-]{1,8}(?![\w\-]))?`;
const HOUSE_NUMBER = String.raw`\d{1,6}[A-Za-z]?(?:-\d{1,4})?`;

const H = "[0-9A-Fa-f]{1,4}";
const V4 = String.raw`\d{1,3}(?:\.\d{1,3}){3}`;
/** Forms ending in an IPv4 address first, so "::ffff:10.0.0.1" is not cut at the dot. */
const IPV6 = [
  `(?:${H}:){6}${V4}`,
  `(?:${H}(?::${H}){0,5})?::(?:${H}:){0,5}${V4}`,
  `(?:${H}:){7}${H}`,
  `(?:${H}:){1,7}:`,
  `(?:${H}:){1,6}:${H}`,
  `(?:${H}:){1,5}(?::${H}){1,2}`,
  `(?:${H}:){1,4}(?::${H}){1,3}`,
  `(?:${H}:){1,3}(?::${H}){1,4}`,
  `(?:${H}:){1,2}(?::${H}){1,5}`,
  `${H}:(?::${H}){1,6}`,
  `:(?::${H}){1,7}`,
].join("|");

/** RFC 5322 "atext" and dots: what the local part of an address may be made of. */
const EMAIL_LOCAL = String.raw`[A-Za-z0-9!#$%&'*+/=?^_\x60{|}~.\-]`;

/** Characters a URL may contain here; brackets are excluded so a placeholder ends it. */
const URL_CHARS = String.raw`[^\s<>"'\x60{}|\\^\[\]]`;
const TLD = "(?:com|org|net|io|gov|edu|health|us|co|app|dev|ai|info|biz|me|care|clinic|md)";

// Names. Every name pattern is split into its first capital and the rest, so the engine can
// skip to capitals and only then look behind for a title or label.
const WORD_REST = String.raw`(?:['’][A-Z][a-z]{1,30}|[a-z]{1,30}(?:[A-Z][a-z]{1,30})?(?:['’\-][A-Z]?[a-z]{2,30}){0,2})`;
const WORD = `[A-Z]${WORD_REST}`;
const MORE_WORDS = (max: number) => String.raw`(?:\s{1,2}(?:[A-Z]\.?\s{1,2})?${WORD}){0,${max}}`;
/** "Smith", "Jane Q. Public", "J. Smith", "O'Brien", "McDonald". */
const FULL_NAME_REST = String.raw`(?:\.\s{1,2}${WORD}|${WORD_REST})${MORE_WORDS(2)}`;
/** At least two words: after a bare "patient" one capitalised word is too weak a signal. */
const TWO_NAMES_REST = String.raw`${WORD_REST}\s{1,2}(?:[A-Z]\.?\s{1,2})?${WORD}${MORE_WORDS(1)}`;
/** After an explicit "Name:" even an all-caps name counts. */
const LABELLED_NAME_REST = String.raw`[A-Za-z'’\-]{1,30}(?:\s{1,2}[A-Z][A-Za-z'’\-]{0,30}\.?){0,3}`;

/** Capitalised titles; lower case only where unambiguous ("ms" is milliseconds, "MS Teams" a product). */
const TITLE = String.raw`(?:Mrs?|M[sx]|Miss|Mister|Dr|Doctor|Prof|Professor|(?:MRS?|MS|DR|dr)(?=\.)|mister|doctor|professor)`;
const PERSON = `(?:[Pp]atient|PATIENT|[Pp]t|[Cc]lient|[Rr]esident|[Mm]ember|[Pp]erson|[Mm]an|[Ww]oman|[Bb]oy|[Gg]irl|[Cc]hild|[Ss]on|[Dd]aughter|[Ii]nfant|[Bb]aby)`;
const NAME_QUALIFIER = `(?:[Pp]atient|PATIENT|[Ff]ull|FULL|[Ll]egal|[Ff]irst|FIRST|[Ll]ast|LAST|[Gg]iven|[Ff]amily|[Mm]iddle|[Mm]aiden|[Ss]ubscriber|[Gg]uarantor)`;
/** "agent name: Intake Bot" names a thing, not a person. */
const THINGS = (
  "agent loop route tool file project workspace channel task queue team company org organization step field " +
  "column host server app bot model token key display user package variable env table event service plan template " +
  "clinic practice product brand"
).split(" ");
const NOT_A_THING = String.raw`(?<!(?:${THINGS.map((w) => `[${w.charAt(0).toUpperCase()}${w.charAt(0)}]${w.slice(1)}`).join("|")})[\s_\-]{1,2})`;

/** A cue that a person's name follows, and the shape the name must have after it. */
const nameCues: ReadonlyArray<readonly [cue: string, rest: string]> = [
  [String.raw`\b${TITLE}\.?\s{1,3}`, FULL_NAME_REST],
  [String.raw`\b(?:[Pp]atient|PATIENT|[Pp]t\.?|[Cc]lient|[Rr]esident)\s{1,3}`, TWO_NAMES_REST],
  [String.raw`\b(?:[Pp]atient|PATIENT|[Pp]t|PT|[Cc]lient|CLIENT|[Rr]esident)\s{0,2}[:=]\s{0,3}`, LABELLED_NAME_REST],
  [String.raw`\b${PERSON}\s{1,3}(?:named|called)\s{1,3}`, FULL_NAME_REST],
  [String.raw`\b[Mm]y\s{1,2}name\s{1,2}is\s{1,3}`, FULL_NAME_REST],
  [
    String.raw`${NOT_A_THING}\b(?:${NAME_QUALIFIER}['’]?s?\s{1,2})?(?:[Nn]ame|NAME)\s{0,2}[:=]\s{0,3}`,
    LABELLED_NAME_REST,
  ],
];
/** A title is not a name: "Dr. Dr." has none. */
const NOT_A_TITLE = String.raw`(?!(?<=[MDP])(?:rs?|[sx]|iss|ister|r|octor|rof|rofessor)\b)`;
const NAMES = `[A-Z]${NOT_A_TITLE}(?:${nameCues.map(([cue, rest]) => `(?<=${cue}[A-Z])${rest}`).join("|")})`;

// ---------------------------------------------------------------------------------------------
// Labelled values. A value sits right after its label ("MRN: 12345678") and contains a digit, so
// rather than trying every label at every word of the text, the scan visits the few digit runs
// and tries the labels only at the starts of the handful of words just before each.

interface LabelledFamily {
  kind: IdentifierKind;
  /** The label and what may separate it from the value. */
  label: string;
  /** The value. */
  value: string;
}

const labelledFamilies: readonly LabelledFamily[] = [
  {
    kind: "ssn",
    label: String.raw`(?:SSN|SS#|SSA|social\s{1,2}security(?:${NO})?|soc\.?\s{0,2}sec\.?(?:${NO})?)${SEP}`,
    value: String.raw`\d{3}[\s\-]?\d{2}[\s\-]?\d{4}(?!\d)`,
  },
  {
    kind: "mrn",
    label: String.raw`(?:MRN|MR#|MR\s{0,2}no\.?|medical\s{1,2}record(?:${NO})?|med\.?\s{0,2}rec\.?(?:${NO})?|chart${NO}|patient${NO}|pt\.?${NO}|EHR${NO}|EMR${NO})${SEP}`,
    value: ID,
  },
  {
    kind: "dob",
    label: String.raw`(?:DOB|D\.O\.B\.?|date\s{1,2}of\s{1,2}birth|birth\s{0,2}date|birthday|b-?day|born(?:\s{1,2}(?:on|in))?)${SEP}`,
    value: DOB_VALUE,
  },
  {
    kind: "fax",
    label: String.raw`fax(?:ed)?(?:${NO}|\s{1,2}line)?${SEP}(?:(?:to|at)\s{1,3})?`,
    value: String.raw`${US_PHONE}(?!\d)`,
  },
  {
    kind: "phone",
    label: String.raw`(?:phone|tel|telephone|cell|mobile|call|text|ph|contact)(?:${NO})?${SEP}(?:(?:me|them|him|her)\s{1,3})?(?:(?:on|at)\s{1,3})?`,
    value: String.raw`(?:${US_PHONE}|\d{3}[\s.\-]\d{4}|\d{7})(?![\w\-])`,
  },
  {
    kind: "member_id",
    label: String.raw`(?:member${NO}|subscriber${NO}?|policy${NO}|group${NO}|insurance${NO}|plan${NO}|beneficiary${NO}?|medicaid${NO}?|medicare${NO}?|MBI|HICN|health\s{1,2}plan${NO})${SEP}`,
    value: ID,
  },
  {
    kind: "account",
    label: String.raw`(?:account${NO}?|acct\.?${NO}?|billing\s{1,2}(?:account|id)|invoice${NO}|claim${NO}|routing\s{1,2}(?:number|no\.?|#)|IBAN|card${NO})${SEP}`,
    value: ID,
  },
  {
    kind: "license",
    label: String.raw`(?:driver['’]?s?\s{1,2}licen[cs]e${NO}?|licen[cs]e${NO}|DL${NO}?|certificate${NO}|passport${NO}?|DEA${NO}?)${SEP}`,
    value: ID,
  },
  {
    kind: "device_id",
    label: String.raw`(?:serial${NO}?|S\/N|device${NO}|device\s{1,2}serial|UDI|IMEI)${SEP}`,
    value: ID,
  },
  {
    kind: "vehicle",
    label: String.raw`(?:VIN|vehicle\s{1,2}id(?:entification\s{1,2}number)?|licen[cs]e\s{1,2}plate|plate${NO})${SEP}`,
    value: ID,
  },
  {
    kind: "zip",
    label: String.raw`(?:zip(?:\s{0,2}code)?|postal\s{1,2}code|post\s{0,2}code)${SEP}`,
    value: String.raw`\d{5}(?:-\d{4})?(?![\w\-])`,
  },
  {
    // Safe Harbor: ages over 89 are identifying.
    kind: "age",
    label: `age[ds]?${SEP}`,
    value: String.raw`(?:9\d|1[0-2]\d)(?!\d)`,
  },
];

/** Sticky: tried only at a word start. Group i + 1 is the value of family i. */
const LABELLED = new RegExp(labelledFamilies.map((f) => `${f.label}(${f.value})`).join("|"), "iy");
const DIGITS = /\d+/g;
/** How far before a value its label may start: "driver's license number is " and some. */
const LABEL_REACH = 40;

function isLetter(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

function isValueChar(code: number): boolean {
  return isLetter(code) || (code >= 48 && code <= 57) || code === 45;
}

/** The labelled value whose label starts at `at`, if any. */
function labelledAt(text: string, at: number): IdentifierSpan | null {
  LABELLED.lastIndex = at;
  const match = LABELLED.exec(text);
  if (match === null) return null;
  for (let i = 0; i < labelledFamilies.length; i++) {
    const value = match[i + 1];
    const family = labelledFamilies[i];
    if (value !== undefined && family !== undefined) {
      const end = at + match[0].length;
      return { kind: family.kind, start: end - value.length, end };
    }
  }
  return null;
}

/** Tries the word starts just before the token holding the digit run at `digit`, nearest first. */
function labelledBefore(text: string, digit: number): IdentifierSpan | null {
  let token = digit;
  while (token > 0 && isValueChar(text.charCodeAt(token - 1))) token--;
  const reach = Math.max(0, token - LABEL_REACH);
  for (let at = token - 1; at >= reach; at--) {
    if (!isLetter(text.charCodeAt(at)) || (at > 0 && isLetter(text.charCodeAt(at - 1)))) continue;
    const span = labelledAt(text, at);
    if (span !== null) return span;
  }
  return null;
}

function collectLabelled(text: string, found: IdentifierSpan[]): void {
  DIGITS.lastIndex = 0;
  for (let run = DIGITS.exec(text); run !== null; run = DIGITS.exec(text)) {
    const span = labelledBefore(text, run.index);
    if (span === null || overlaps(found, span.start, span.end)) continue;
    found.push(span);
    DIGITS.lastIndex = Math.max(DIGITS.lastIndex, span.end);
  }
}

// ---------------------------------------------------------------------------------------------
// Vetoes and trims.

/** A URL carries an id when it has a query, userinfo, or a path segment or fragment with a digit. */
function urlKeep(value: string): number {
  const trimmed = value.replace(/[.,;:!?)'"]+$/, "");
  return urlCarriesId(trimmed) ? trimmed.length : 0;
}

function urlCarriesId(url: string): boolean {
  const rest = url.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "");
  const slash = rest.search(/[/?#]/);
  const authority = slash < 0 ? rest : rest.slice(0, slash);
  if (authority.includes("@")) return true;
  if (slash < 0) return false;
  const tail = rest.slice(slash);
  if (/\?./.test(tail)) return true;
  const [path = "", fragment = ""] = tail.split("#", 2);
  if (/\d/.test(fragment)) return true;
  // API versions ("/v1/") are not ids.
  return path.split("/").some((segment) => /\d/.test(segment) && !/^v\d+(?:\.\d+)*$/i.test(segment));
}

/** Loopback and unspecified addresses identify no one; builders write them all the time. */
const LOOPBACK = new Set(["127.0.0.1", "0.0.0.0", "::1", "::"]);

function ipv4Keep(value: string): number {
  if (LOOPBACK.has(value)) return 0;
  return value.split(".").every((octet) => Number(octet) <= 255) ? value.length : 0;
}

/** "a::b" could be code; an address has a digit or at least three groups. */
function ipv6Keep(value: string): number {
  if (LOOPBACK.has(value)) return 0;
  const colons = value.split(":").length - 1;
  return colons >= 2 && (/\d/.test(value) || colons >= 3) ? value.length : 0;
}

function intlPhoneKeep(value: string): number {
  const digits = value.replace(/\D/g, "").length;
  return digits >= 8 && digits <= 15 ? value.length : 0;
}

// ---------------------------------------------------------------------------------------------
// Pattern detectors, in priority order after the labelled values.

interface Facts {
  digit: boolean;
  at: boolean;
  web: boolean;
  /** "::" or many colons: worth looking for IPv6. */
  ipv6: boolean;
  /** Five colons or dashes: worth looking for a MAC address. */
  mac: boolean;
}

interface Detector {
  kind: IdentifierKind;
  /** Global; the whole match is the value unless a capture group took part (then the first one, which ends the match). */
  pattern: RegExp;
  /** Cheap facts about the text that must hold before the pattern is worth running. */
  needs: keyof Facts | "always";
  /** How many leading characters of the value to redact (0 rejects the match): trims or vetoes. */
  keep?: (value: string) => number;
}

function rx(source: string, flags = "g"): RegExp {
  return new RegExp(source, flags);
}

/** Detectors that run before the labelled values: their matches can contain text that looks labelled. */
const earlyDetectors: readonly Detector[] = [
  {
    kind: "url",
    needs: "web",
    pattern: rx(
      String.raw`\b(?:(?:https?|ftps?|wss?):\/\/${URL_CHARS}{1,2048}|(?!${EMAIL_LOCAL}{1,128}@)(?:www\.${URL_CHARS}{1,2048}|[a-z0-9](?:[a-z0-9\-]{0,62}\.){1,8}${TLD}\/${URL_CHARS}{0,2048}))`,
      "gi",
    ),
    keep: urlKeep,
  },
  {
    kind: "email",
    needs: "at",
    pattern: rx(
      String.raw`(?<!${EMAIL_LOCAL})${EMAIL_LOCAL}{1,128}@[A-Za-z0-9\-]{1,63}(?:\.[A-Za-z0-9\-]{1,63}){0,8}\.[A-Za-z]{2,24}(?![A-Za-z0-9\-])`,
    ),
  },
  // Network addresses are self-delimiting; "dea:000" inside one is not a DEA number.
  { kind: "ip", needs: "ipv6", pattern: rx(String.raw`(?<![\w:])(?:${IPV6})(?![\w:]|\.\d)`), keep: ipv6Keep },
  {
    kind: "ip",
    needs: "digit",
    pattern: rx(String.raw`(?<![\w.])\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}(?!\.?\d)(?!\w)`),
    keep: ipv4Keep,
  },
];

const detectors: readonly Detector[] = [
  { kind: "ssn", needs: "digit", pattern: rx(String.raw`(?<![\w\-])\d{3}(?:-\d{2}-|\s\d{2}\s)\d{4}(?![\w\-])`) },
  {
    kind: "account",
    needs: "digit",
    pattern: rx(String.raw`(?<![\w\-])\d{4}[\s\-]\d{4}[\s\-]\d{4}[\s\-]\d{1,4}(?![\w\-])`),
  },
  {
    kind: "phone",
    needs: "digit",
    pattern: rx(
      String.raw`(?<![\w+\-])(?:\+?1[\s.\-]?)?(?:\(\d{3}\)\s?|\d{3}[\s.\-])\d{3}[\s.\-]\d{4}${EXTENSION}(?![\w\-])`,
    ),
  },
  { kind: "phone", needs: "digit", pattern: rx(String.raw`(?<![\w+.\-])(?:\+?1)?\d{10}(?![\w\-]|\.\d)`) },
  {
    kind: "phone",
    needs: "digit",
    pattern: rx(String.raw`(?<![\w+])\+\d{1,3}(?:[\s.\-]\(?\d{1,4}\)?){1,5}(?![\w\-])|(?<![\w+])\+\d{8,15}(?!\d)`),
    keep: intlPhoneKeep,
  },
  {
    kind: "device_id",
    needs: "mac",
    pattern: rx(String.raw`(?<![\w:\-])[0-9A-Fa-f]{2}(?:(?::[0-9A-Fa-f]{2}){5}|(?:-[0-9A-Fa-f]{2}){5})(?![\w:\-])`),
  },
  { kind: "zip", needs: "digit", pattern: rx(String.raw`(?<![\w\-])\d{5}-\d{4}(?![\w\-])`) },
  {
    kind: "age",
    needs: "digit",
    pattern: rx(String.raw`(?<![\w\-])(?:9\d|1[0-2]\d)(?:\s|-)?(?:years?|yrs?|y\/?o)(?:[\s\-]old)?\b`, "gi"),
  },
  {
    kind: "address",
    needs: "digit",
    pattern: rx(
      String.raw`\b${HOUSE_NUMBER}\s{1,3}(?:(?:[NSEW]\.?|[A-Z][a-z]{1,20}|\d{1,3}(?:st|nd|rd|th))\s{1,3}){1,4}${STREET_SUFFIX}\b\.?${UNIT}`,
    ),
  },
  {
    kind: "address",
    needs: "digit",
    pattern: rx(
      String.raw`\b${HOUSE_NUMBER}\s{1,3}(?:[a-z]{2,20}\s{1,3}){1,3}(?:street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|highway|hwy|parkway|pkwy)\b\.?${UNIT}`,
      "gi",
    ),
  },
  {
    kind: "address",
    needs: "digit",
    pattern: rx(
      String.raw`\b(?:[Aa]pt|[Aa]partment|APT|Suite|Ste|Unit|Bldg|Room)\.?\s{0,3}#?\s{0,2}(?=[A-Za-z0-9\-]{0,8}\d)[A-Za-z0-9\-]{1,8}(?![\w\-])|\bP\.?\s?O\.?\s{0,2}Box\s{1,3}\d{1,8}\b`,
    ),
  },
  // "Springfield, IL 62704": the city is a geographic subdivision smaller than a state.
  {
    kind: "address",
    needs: "digit",
    pattern: rx(String.raw`\b[A-Z][a-z]{1,20}(?:\s[A-Z][a-z]{1,20}){0,2}(?=,\s{1,2}${STATES}\s{1,2}\d{5}(?!\w))`),
  },
  { kind: "zip", needs: "digit", pattern: rx(String.raw`\b${STATES}\s{1,2}(\d{5}(?:-\d{4})?)(?![\w\-])`) },
  {
    kind: "date",
    needs: "digit",
    pattern: rx(
      String.raw`(?<![\w./\-:])(?:${NUMERIC_DATES.join("|")})(?![\w/\-]|\.\d)|\b(?:${[...MONTH_FIRST_DATES, ...DAY_FIRST_DATES].join("|")})`,
    ),
  },
  { kind: "name", needs: "always", pattern: rx(NAMES) },
];

// ---------------------------------------------------------------------------------------------
// Scanning.

function countOf(text: string, char: string, atLeast: number): boolean {
  let count = 0;
  for (let at = text.indexOf(char); at >= 0; at = text.indexOf(char, at + 1)) {
    if (++count >= atLeast) return true;
  }
  return false;
}

function factsOf(text: string): Facts {
  return {
    digit: /\d/.test(text),
    at: text.includes("@"),
    web: text.includes("/") || /www\./i.test(text),
    ipv6: text.includes("::") || countOf(text, ":", 6),
    mac: countOf(text, ":", 5) || countOf(text, "-", 5),
  };
}

function applies(needs: Detector["needs"], facts: Facts): boolean {
  return needs === "always" || facts[needs];
}

/** The value of a match: its first participating group (which ends the match), else all of it. */
function matchedValue(match: RegExpExecArray): string {
  for (let i = 1; i < match.length; i++) {
    const group = match[i];
    if (group !== undefined) return group;
  }
  return match[0];
}

function overlaps(spans: readonly IdentifierSpan[], start: number, end: number): boolean {
  return spans.some((span) => start < span.end && span.start < end);
}

function collect(detector: Detector, text: string, found: IdentifierSpan[]): void {
  const { pattern, kind, keep } = detector;
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    const value = matchedValue(match);
    const start = match.index + match[0].length - value.length;
    const length = keep ? keep(value) : value.length;
    if (length > 0 && !overlaps(found, match.index, start + length)) {
      found.push({ kind, start, end: start + length });
    } else {
      // Its label may sit in text already claimed ("45 Elm Dr. Dr. Who"): look again just after.
      pattern.lastIndex = match.index + 1;
    }
  }
}

/** Every identifier in `text`, by position, never overlapping. */
export function findIdentifiers(text: string): IdentifierSpan[] {
  if (typeof text !== "string" || text.length === 0) return [];
  const facts = factsOf(text);
  const found: IdentifierSpan[] = [];
  for (const detector of earlyDetectors) {
    if (applies(detector.needs, facts)) collect(detector, text, found);
  }
  if (facts.digit) collectLabelled(text, found);
  for (const detector of detectors) {
    if (applies(detector.needs, facts)) collect(detector, text, found);
  }
  return found.sort((a, b) => a.start - b.start);
}

export function containsIdentifiers(text: string): boolean {
  return findIdentifiers(text).length > 0;
}

function replaceSpans(text: string, spans: readonly IdentifierSpan[]): string {
  let out = "";
  let cursor = 0;
  for (const span of spans) {
    out += text.slice(cursor, span.start) + placeholder(span.kind);
    cursor = span.end;
  }
  return out + text.slice(cursor);
}

/** Passes after which redaction stops even if something still looks like an identifier. */
const MAX_PASSES = 4;

/**
 * Replaces every identifier with its placeholder. It repeats until a pass finds nothing, so
 * text that only becomes recognisable once a neighbour is replaced is caught too, and
 * `redact(redact(x)) === redact(x)`.
 */
export function redact(text: string): string {
  if (typeof text !== "string") return "";
  let current = text;
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const spans = findIdentifiers(current);
    if (spans.length === 0) break;
    current = replaceSpans(current, spans);
  }
  return current;
}
