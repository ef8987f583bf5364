/**
 * People's names in free text, found the way Presidio-style recognizers find them: by context
 * (a label, a relationship, a greeting or a signature before them) and by name lists (a
 * capitalised pair whose words are human names and not ordinary English, company or place
 * words), then every other occurrence of a name already found.
 *
 * The lists come from maintained packages through `vocab.ts`: human names of many cultures,
 * the most common English words (and, for a lower-case word, Spanish and Portuguese ones),
 * company and software names, US states and cities. A word's standing decides what it can be
 * part of:
 * - strong: a name that is not also a common word, a company or a place ("Priya", "Okafor");
 * - weak: a name that is also one of those ("Grace", "Park", "Georgia");
 * - unknown: capitalised and in no list at all ("Chidi", "Redcloud"), which can complete a name
 *   but not start one on its own;
 * - other: a common word, a company or a place that is no name ("Send", "Twilio", "Portal").
 * A capitalised run needs two name words, one of them strong, to count without context; after a
 * cue one name-like word is enough. Every quantifier is bounded and the scan is linear.
 */
import { Bloom } from "./bloom.ts";
import { fold } from "./fold.ts";
import { nameTagger, type TaggerToken } from "./name-tagger.ts";
import { vocab } from "./vocab.ts";

export interface NameSpan {
  start: number;
  end: number;
}

enum Standing {
  Strong = 0,
  Weak = 1,
  Unknown = 2,
  Other = 3,
}

export interface Token {
  start: number;
  end: number;
  /** The token as written. */
  text: string;
  /** Lower case, without apostrophes: what cue words are looked up as. */
  plain: string;
  capitalised: boolean;
  allCaps: boolean;
  particle: boolean;
  /** A single capital with a dot: "J." */
  initial: boolean;
  /** Computed when first needed (see `standing`): most words never need it. */
  known: Standing | -1;
  /** What separates this token from the previous one. */
  gap: string;
  /** The name tagger's facts about the token, once it has looked (name-tagger.ts). */
  tagger: TaggerToken["tagger"];
}

/** A set of words, written as one space-separated string. */
const wordSet = (words: string): ReadonlySet<string> => new Set(words.split(" "));

/** Lower-case words that join the parts of a name: "van der Berg", "de la Cruz", "bin Hassan". */
const PARTICLES = wordSet("van von der den de del della di da das dos du la le bin binti ibn al el ter ten y st mac");

const MAX_PARTICLE = Math.max(...[...PARTICLES].map((particle) => particle.length));

/** Words right before a name: relationships, titles, "named", self-introductions. One name word is enough after them. */
const PERSON_WORDS =
  "son|daughter|child|kid|baby|infant|toddler|mother|mom|mum|mama|father|dad|papa|parent|wife|husband|spouse|partner|fianc[eé]e?|boyfriend|girlfriend|brother|sister|sibling|grandson|granddaughter|grandchild|grandmother|grandfather|grandma|grandpa|granny|aunt|uncle|niece|nephew|cousin|stepson|stepdaughter|stepmother|stepfather|caregiver|carer|guardian|friend|neighbou?r|roommate|hij[oa]|espos[oa]|madre|padre|mam[aá]|pap[aá]|abuel[oa]|herman[oa]|t[ií][oa]|filh[oa]|m[aã]e|pai|av[oóô]|irm[aã]o?|colleague|coworker|co-worker|teammate|new hire|intern|trainee|miss|professor|named|called|ask for|driver|name is|this is|it['’]?s|i am|i['’]?m|call me";

/**
 * "names", "name of": a person's only when no other thing's names are meant ("brand names like
 * Lipitor", "the file name of", "drug names such as Xarelto").
 */
const NAMES_OF = String.raw`(?<!\b(?:brand|drug|medication|med|product|file|host|domain|company|field|column|variable|table|display|app|bot|template|project|street|place|city|town|pet|team|channel|queue|tag|key|model|font|trade|generic|code|test|feature|function|class|module|package|repo|branch|device|plan|clinic|hospital|site|location|department|unit|ward|room|user|screen)\s{1,2})(?:names|name of)`;

/** Roles and labels: after them one name word is enough only with a separator ("Patient: Ana"); bare, two are needed ("patient Ana Ruiz"). */
const ROLE_WORDS =
  "patient|pt|client|resident|member|caller|contact|guarantor|subscriber|insured|dependent|recipient|sender|attn|attention|cc|nurse|rn|lpn|np|physician|provider|pcp|surgeon|therapist|pharmacist|coordinator|doctor|doc|md|emergency contact|next of kin|nok|name|surname|signed by|approver|reviewer|manager|supervisor|scheduler|technician|tech|rep|representative|agent|case manager|social worker|interpreter|author|reporter|assignee|assigned to|assigned|reassigned to|reassigned|owner|attendees|participants|invitees|reviewers|owners|signers|requester|requested by|submitted by|reported by";

const SEPARATOR = String.raw`(?:\s{0,2}(?:is|was|are|:|=|-|–|—|,|\.|\(|#)){0,2}\s{0,3}(?:(?:like|such as|e\.g\.|incl(?:uding|\.)?)\s{1,3})?`;

/**
 * The cue patterns all end in `$`: they ask how the text before a word ends. Tried forward, the
 * engine starts them at each of the 40 characters before the word; as a lookbehind from the end
 * it reads backwards once, with the same answer (3–4× faster). `ROLE_CUE` keeps its forward form
 * for its group, behind this test.
 */
function endsWith(pattern: RegExp): RegExp {
  return new RegExp(`$(?<=${pattern.source})`, pattern.flags);
}

/** A cue that one name word suffices after: "her son, ", "named ", "names like ", "[NAME], ". */
const PERSON_CUE = endsWith(
  new RegExp(
    String.raw`(?:(?:^|[^\p{L}])(?:${PERSON_WORDS}|${NAMES_OF})(?:['’]s)?${SEPARATOR}|\[NAME\],\s{1,2})$`,
    "iu",
  ),
);

/**
 * Titles, case-sensitive: "Dr. ", "Mrs ", "DR. " — but not "200 ms" or "MS Teams", where the
 * letters are a unit or a product.
 */
const TITLE_CUE = endsWith(
  /(?:^|[^\p{L}])(?:(?:Mr|Mrs|Ms|Mx|Dr|Prof|Sr|Sra|Srta|Sgt|Cpl|Pvt|Lt|Capt|Maj|Col|Gen|Rev|Fr|Sister|Brother|Pastor|Rabbi|Imam|Coach)\.?|(?:MR|MRS|DR|PROF|mr|mrs|ms|dr)\.)\s{1,3}$|(?:^|[^\p{L}])(?<!\b(?:the|a|an|our|your|their|this|that)\s{1,3})(?:NP|RN|LPN|LVN|CNA|CRNA|PA-C|NP-C|Nurse)[ \t]{1,3}$/u,
);

/** A role or label before a name, and whether a separator follows it. */
const ROLE_CUE = new RegExp(
  String.raw`(?:^|[^\p{L}])(?:${ROLE_WORDS})(?:['’]s)?(?:\s{0,2}(?:name|#|no\.?))?(?<separator>\s{0,2}(?:[:=(#]|-\s|–|—)\s{0,3}["']?)?\s{0,3}$`,
  "iu",
);
const ROLE_CUE_ENDS = endsWith(ROLE_CUE);

/** A greeting or a sign-off before a name: "Hi Marisol", "Thanks, Dmitri", "— Priya". */
const GREETING = endsWith(
  /(?:^|[\n.!?]\s{0,3}|[^\p{L}\s]\s{0,2})(?:hi|hello|hey|dear|thanks|thank you|thx|regards|best|cheers|sincerely|love|ask|call|text|email|page|ping|tell|remind|notify|message|cc)[,:!]?\s{1,3}$|(?:^|\n)\s{0,3}(?:--?|—|–|~)\s{0,2}$|\s(?:--?|—|–)\s{0,2}$/iu,
);

/** The words `TITLE_CUE` ends with, as tokens read them (lower case): the word before a titled name. */
const TITLE_CUE_WORDS = wordSet(
  "mr mrs ms mx dr prof sr sra srta sgt cpl pvt lt capt maj col gen rev fr sister brother pastor rabbi imam coach np rn lpn lvn cna crna pa-c np-c nurse",
);
/** The words `GREETING` ends with ("thank you": "you"); a dash in the gap is its other ending. */
const GREETING_WORDS = wordSet(
  "hi hello hey dear thanks you thx regards best cheers sincerely love ask call text email page ping tell remind notify message cc",
);

/** The headers of a forwarded email: "From: Oksana Hrytsenko", "To: …". */
const HEADER = endsWith(/(?:^|\n|\s)(?:from|to|cc|bcc)\s{0,2}:\s{0,3}$/i);

/** A key of structured data holding a name: `"first": "`, `last_name=`, `patientName: '`. */
const KEY = endsWith(
  /(?:^|[^\p{L}])(?:(?:first|last|given|family|middle|full|patient|member|guarantor|caregiver|contact|subscriber|sur)?[_\s-]?(?:name|first|last)|given|family|surname|forename)["']?\s{0,2}[:=]\s{0,2}\[?\s{0,2}["']?$/iu,
);

/** "al-Farsi", "bin-Zayed", "d'Angelo": a lower-case particle joined to a capitalised surname. */
const PREFIXED_CAPITAL = /^(?:al|el|bin|ibn|abu|bint|d|da|de|di|van|von)[-'’]\p{Lu}\p{Ll}/u;

/** A hyphen or an apostrophe within a word's first five characters: where `PREFIXED_CAPITAL` can match. */
function hasJoinEarly(word: string): boolean {
  // Its particles start with a, b, d, e, i or v: most words are settled by their first letter.
  const first = word.charCodeAt(0);
  if (first !== 97 && first !== 98 && first !== 100 && first !== 101 && first !== 105 && first !== 118) return false;
  for (let k = 1; k < Math.min(5, word.length - 1); k++) {
    const code = word.charCodeAt(k);
    if (code === 45 || code === 39 || code === 8217) return true;
  }
  return false;
}

/** A word, tried at one position (sticky). */
const WORD_AT = /[\p{L}][\p{L}\p{M}'’-]{0,40}/uy;

/** `[A-Za-z]`: what starts a word in plain ASCII text. */
function isAsciiLetter(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90);
}

/** `[A-Za-z'-]`: what continues one. */
function isAsciiWordChar(code: number): boolean {
  return isAsciiLetter(code) || code === 39 || code === 45;
}

/**
 * Every word any cue is made of (a superset: the cue patterns' letters split at their syntax).
 * A token whose previous word is none of these, with no punctuation that can label a value
 * between them, cannot follow a cue, and the cue patterns need not run for it.
 */
const CUE_WORDS = new Set(
  [PERSON_WORDS, ROLE_WORDS, SEPARATOR, GREETING.source, KEY.source, TITLE_CUE.source].flatMap(
    (source) =>
      source
        .toLowerCase()
        .replace(/\[[^\]]*\]\??/g, "")
        .match(/[a-z]+/g) ?? [],
  ),
);
/** `:=#(]—–~-`, the punctuation that can label a value: looked for in a token's gap without a regular expression (most gaps are one space). */
function hasCuePunctuation(gap: string): boolean {
  for (let k = 0; k < gap.length; k++) {
    const code = gap.charCodeAt(k);
    if (code === 58 || code === 61 || code === 35 || code === 40 || code === 93 || code === 8212) return true;
    if (code === 8211 || code === 126 || code === 45) return true;
  }
  return false;
}

function mayFollowCue(tokens: readonly Token[], i: number): boolean {
  const token = tokens[i];
  if (token === undefined) return false;
  if (hasCuePunctuation(token.gap) || i === 0) return true;
  const previous = tokens[i - 1];
  return previous !== undefined && CUE_WORDS.has(previous.plain);
}

/** Days' and months' short names ("Mon Wed Fri", "Mar–Oct"), which name lists hold as given names; not those that are given names too (Thu, Jun, Dec, Jan). */
const CALENDAR_SHORT = wordSet("mon tue tues wed thur thurs fri sat sun feb mar apr jul aug sep sept oct nov");

/** Credentials after a name ("Priya Raman, PharmD"): never part of one. */
const CREDENTIALS = wordSet(
  "md do rn np pa pa-c lpn lvn cna crna cnm fnp dnp msn bsn phd psyd pharmd rph dds dmd od dpt ot pt lcsw lmft mph mba facp faan",
);

/**
 * Acronyms of healthcare software and the common lab panels, in capitals: the tagger never takes
 * one for a name ("Dr. SMS" is no doctor, "ANC 1100" a neutrophil count).
 */
const ACRONYMS = wordSet(
  "sms mms mrn dob ssn npi dea ehr emr phi pii hipaa baa icu ed er or api url pdf ivr otp cpt icd hl7 fhir sso mfa crm csv json xml sql ci cd qa ux ui llm " +
    "anc wbc rbc hgb hb hct plt mcv mch mchc rdw bun alt ast alp ggt ldh inr ptt pt tsh ldl hdl bmp cmp cbc esr crp gfr egfr bnp psa ua",
);

/** Whether a word has parts: a hyphen or an apostrophe ("Ji-hoon", "O'Brien"). */
const hasParts = (word: string) => word.includes("-") || word.includes("'") || word.includes("’");
const NO_PARTS: readonly string[] = [];

function standingOf(word: string, capitalised: boolean): Standing {
  const { names, common, commonElsewhere, orgs, places } = vocab();
  let folded = fold(word);
  if (folded.endsWith("'s")) folded = folded.slice(0, -2);
  // A lower-case word matters only if it is a strong name ("pt john kowalski"); most are common
  // words or no name at all, and one or two lookups settle them.
  // The word is hashed once for all the lists it is looked up in.
  if (!capitalised && folded.length < 3) return Standing.Other;
  if (CREDENTIALS.has(folded) || CALENDAR_SHORT.has(folded)) return Standing.Other;
  if (!capitalised) {
    const hash = Bloom.hashOf(folded);
    // A common Spanish or Portuguese word too: "y vive sola" in a patient's message.
    if (common.hasHash(hash) || !names.hasHash(hash) || commonElsewhere.hasHash(hash)) return Standing.Other;
    return orgs.hasHash(hash) || places.hasHash(hash) ? Standing.Other : Standing.Strong;
  }
  const hash = Bloom.hashOf(folded);
  // Split only a word that has parts: most have none, and the split allocates.
  const parts = hasParts(folded) ? folded.split(/[-'’]/).filter((part) => part.length > 1) : NO_PARTS;
  const isName = names.hasHash(hash) || (parts.length > 1 && parts.every((part) => names.has(part)));
  const ordinary = common.hasHash(hash) || orgs.hasHash(hash) || places.hasHash(hash);
  if (isName) return ordinary ? Standing.Weak : Standing.Strong;
  if (ordinary) return Standing.Other;
  // A capitalised hyphenated word of name parts and unknowns ("Ji-hoon", "Soo-yeon") reads as a name.
  if (parts.length > 1 && parts.some((part) => names.has(part))) return Standing.Strong;
  return Standing.Unknown;
}

function standing(token: Token): Standing {
  if (token.known === -1) token.known = standingOf(token.text, token.capitalised);
  return token.known;
}

function isApostrophe(code: number): boolean {
  return code === 39 || code === 8217;
}

/** What may trail a word match but belongs to the punctuation: hyphens and apostrophes. */
function isTrailing(code: number): boolean {
  return code === 45 || isApostrophe(code);
}

function isDigitAt(text: string, at: number): boolean {
  const code = text.charCodeAt(at);
  return code >= 48 && code <= 57;
}

function isUpper(code: number): boolean {
  return (
    (code >= 65 && code <= 90) || (code > 127 && String.fromCharCode(code) !== String.fromCharCode(code).toLowerCase())
  );
}

/** A capital after the fourth character, past a run of small letters: "OperationOutcome", "JaneApp". */
function isCamelCase(word: string): boolean {
  for (let k = 4; k < word.length; k++) {
    const code = word.charCodeAt(k);
    if (code >= 65 && code <= 90) {
      const before = word.charCodeAt(k - 1);
      return before >= 97 && before <= 122;
    }
  }
  return false;
}

/** Whether `text[start, end)` is ASCII without a capital: its own lower case. */
function isLowerAscii(text: string, start: number, end: number): boolean {
  for (let k = start; k < end; k++) {
    const code = text.charCodeAt(k);
    if (code >= 128 || (code >= 65 && code <= 90)) return false;
  }
  return true;
}

function hasApostrophe(word: string): boolean {
  for (let k = 0; k < word.length; k++) if (isApostrophe(word.charCodeAt(k))) return true;
  return false;
}

/** Whether `word` is its own upper case ("DOB", "A"): by hand over ASCII, where most words are. */
function isOwnUpperCase(word: string): boolean {
  for (let k = 0; k < word.length; k++) {
    const code = word.charCodeAt(k);
    if (code >= 128) return word === word.toUpperCase();
    if (code >= 97 && code <= 122) return false;
  }
  return true;
}

/** Up to two spaces, then ":" or "=", at `at`: the word before is a label ("DOB:", "MRN ="). */
function isLabelAt(text: string, at: number): boolean {
  for (let k = at; k < at + 3 && k < text.length; k++) {
    const char = text.charAt(k);
    if (char === ":" || char === "=") return true;
    if (k === at + 2 || (char !== " " && !/\s/.test(char))) return false;
  }
  return false;
}

export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let previousEnd = 0;
  // Scanned by hand over ASCII, most of any text: the words `/[A-Za-z][A-Za-z'-]{0,40}/g` finds
  // (a letter and up to 40 more letters, apostrophes and hyphens), without a match array each. At
  // a character past ASCII, and for a word that runs into one, `WORD_AT` decides, tried right there:
  // the same words as its pattern finds scanning the whole text.
  const length = text.length;
  let cursor = 0;
  for (;;) {
    let end = -1;
    while (cursor < length) {
      const code = text.charCodeAt(cursor);
      if (code < 128) {
        if (isAsciiLetter(code)) break;
      } else {
        WORD_AT.lastIndex = cursor;
        if (WORD_AT.test(text)) {
          end = WORD_AT.lastIndex;
          break;
        }
      }
      cursor++;
    }
    if (cursor >= length) break;
    const start = cursor;
    if (end < 0) {
      const limit = Math.min(length, start + 41);
      end = start + 1;
      while (end < limit && isAsciiWordChar(text.charCodeAt(end))) end++;
      if (end < limit && text.charCodeAt(end) >= 128) {
        WORD_AT.lastIndex = start;
        WORD_AT.test(text);
        end = WORD_AT.lastIndex;
      }
    }
    cursor = end;
    // Trailing hyphens and apostrophes, and a possessive 's, belong around the name, not in it.
    while (end - start > 1 && isTrailing(text.charCodeAt(end - 1))) end--;
    if (end - start > 3 && text.charCodeAt(end - 1) === 115 && isApostrophe(text.charCodeAt(end - 2))) end -= 2;
    // A placeholder's word ("[DOB]"), letters glued to digits ("ZGP123") or a label ("DOB:") are no name.
    if (text.charCodeAt(start - 1) === 91 && text.charCodeAt(end) === 93) continue;
    // A command's flag ("--lang es", "-v") is no name, whatever its word.
    if (text.charCodeAt(start - 1) === 45 && (start < 2 || /[\s-]/.test(text.charAt(start - 2)))) continue;
    if (isDigitAt(text, end) || isDigitAt(text, start - 1)) continue;
    const raw = text.slice(start, end);
    // A surname after a lower-case particle and a hyphen or an apostrophe is capitalised as the
    // surname is: "al-Farsi", "el-Amin", "d'Angelo".
    const capitalised = isUpper(raw.charCodeAt(0)) || (hasJoinEarly(raw) && PREFIXED_CAPITAL.test(raw));
    // Most words are in lower case ASCII already: `toLowerCase` would cost more than the rest.
    const lower = isLowerAscii(text, start, end) ? raw : raw.toLowerCase();
    const upper = capitalised && isOwnUpperCase(raw);
    if (upper && isLabelAt(text, end)) continue;
    tokens.push({
      start,
      end,
      text: raw,
      plain: hasApostrophe(lower) ? lower.replace(/['’]/g, "") : lower,
      capitalised,
      allCaps: upper && raw.length > 1,
      particle: !capitalised && lower.length <= MAX_PARTICLE && PARTICLES.has(lower),
      initial: raw.length === 1 && capitalised && text.charCodeAt(end) === 46,
      // A word with a capital after four letters or more is code ("OperationOutcome", "JaneApp"),
      // not a name ("McKenzie", "LaToya", "MacArthur" have theirs sooner); so is a word joined to a
      // number by a hyphen (a scale, "GAD-7"; a colour token, "ivy-500").
      known:
        isCamelCase(raw) || (text.charCodeAt(end) === 45 && isDigitAt(text, end + 1))
          ? Standing.Other
          : capitalised || raw === lower
            ? -1
            : Standing.Other,
      // Most gaps are one space: that one string, not a slice of the text each.
      gap: start - previousEnd === 1 && text.charCodeAt(previousEnd) === 32 ? " " : text.slice(previousEnd, start),
      tagger: undefined,
    });
    previousEnd = end;
  }
  return tokens;
}

/**
 * Tokens continue a name across a space, an initial's dot, or the quotes or brackets of a
 * nickname ("Elizabeth 'Betsy' Harrington"); never across a line break.
 */
function joins(token: Token, previous: Token | undefined): boolean {
  if (previous?.initial === true) return /^\.[ \t]{1,2}$/.test(token.gap);
  // One space, the gap between most words, joins: answered without the pattern.
  return token.gap === " " || /^(?:[ \t]{1,2}|[ \t]{1,2}["'“‘(]|["'”’)][ \t]{1,2})$/.test(token.gap);
}

function isNameWord(token: Token): boolean {
  return token.capitalised && token.text.length > 1 && standing(token) !== Standing.Other && !token.allCaps;
}

function nameWords(run: readonly Token[]): Token[] {
  return run.filter((token) => !token.particle && !token.initial);
}

/**
 * A run of name words standing on its own: two or more, one of them strong; or an initial and a
 * surname ("J. Whitaker"). Next to another identifier, any two name-like words.
 */
function acceptedWithoutCue(run: readonly Token[], nearIdentifier: boolean): boolean {
  const words = nameWords(run);
  if (words.length === 0 || !words.every((token) => isNameWord(token))) return false;
  if (words.length === 1) return run[0]?.initial === true;
  // "Rhode Island", "Santa Rosa": a place, whatever its words are on their own.
  if (vocab().places.has(fold(words.map((token) => token.text).join(" ")))) return false;
  return nearIdentifier || words.some((token) => standing(token) === Standing.Strong);
}

/** The name right after a cue at token `i`: up to four words, "Last, First" allowed. */
function nameAfterCue(tokens: readonly Token[], i: number, labelled: boolean, capitals: boolean): number {
  const first = tokens[i];
  if (first === undefined) return i;
  const lowerOk = (token: Token) =>
    !token.capitalised && (standing(token) === Standing.Strong || token.particle) && /^\p{Ll}/u.test(token.text);
  // Upper case only after a label, and not a two-letter credential ("RN", "MD").
  const fits = (token: Token) =>
    (token.capitalised &&
      token.text.length > 1 &&
      (token.allCaps ? capitals && token.text.length > 2 : standing(token) !== Standing.Other)) ||
    lowerOk(token);
  if (!fits(first) || first.particle) return i;
  // A lone lower-case word after a cue must be a strong name ("pt john"), not "patient called".
  if (!first.capitalised && standing(first) !== Standing.Strong) return i;
  let end = i + 1;
  while (end < tokens.length && end - i < 4) {
    const next = tokens[end];
    if (next === undefined) break;
    // The next label ends the name: "From: Oksana Hrytsenko To: …".
    if (/^\s{0,2}:/.test(tokens[end + 1]?.gap ?? "") && next.capitalised) break;
    const commaFirst = labelled && end === i + 1 && /^,\s{1,2}$/.test(next.gap) && next.capitalised;
    const middleInitial = next.capitalised && next.text.length === 1;
    // After an initial any capitalised word is the surname ("Jane Q. Public").
    const afterInitial = tokens[end - 1]?.initial === true && next.capitalised;
    if (!(joins(next, tokens[end - 1]) || commaFirst) || !(fits(next) || next.initial || middleInitial || afterInitial))
      break;
    if (!next.capitalised && !first.capitalised && standing(next) !== Standing.Strong && !next.particle) break;
    end++;
  }
  // Trailing particles are not part of the name.
  while (end > i + 1 && tokens[end - 1]?.particle) end--;
  return end;
}

/** Two words of one to four Han, Hangul or kana characters, with no such word just before or after. */
const CJK_PAIR =
  /(?<![\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}][ 　]?)[\p{Script=Han}\p{Script=Hangul}\p{Script=Katakana}]{1,4}[ 　][\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]{1,4}(?![ 　]?[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}])/gu;

/**
 * Code units of every character in Han, Hangul or Katakana, and more (high surrogates stand for
 * any character past the BMP): a text with none has no `CJK_PAIR`, and most texts have none.
 * Checked against every code point.
 */
const CJK_SCRIPT =
  /[\u1100-\u11ff\u2e80-\u2fdf\u3000-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\uff00-\uffef\ud800-\udbff]/;

/** A word in a script without case (Arabic, Devanagari, Hangul, Thai, Ge'ez…): it can never look capitalised. */
function isCaseless(token: Token): boolean {
  const first = token.text.charCodeAt(0);
  return first > 127 && token.text.toLowerCase() === token.text.toUpperCase();
}

/**
 * Words the tagger looks at: capitalised ones, words of scripts without case (a name written in
 * its own script: "ليلى حداد", "प्रिया शर्मा"), and lower-case ones that a list knows as a name
 * ("dana", "marcus"); an ordinary lower-case word is never a name without a cue.
 */
export function isTaggerCandidate(token: Token): boolean {
  if (token.initial || token.particle || token.text.length < 2) return false;
  if (token.capitalised || isCaseless(token)) return true;
  return token.text.length >= 3 && vocab().names.has(fold(token.plain));
}

/** Pronouns, determiners and small joining words: nobody's name in running text. */
const FUNCTION_WORDS: ReadonlySet<string> = wordSet(
  "my your our their his her its this that these those the a an and or but if so as at by in of on to we you they he she it me us them i im ive ill id youre youve youll were weve well theyre theyve its itll thats theres dont doesnt didnt cant wont isnt arent wasnt",
);
/** Titles and honorifics: the word before a name, never one ("Mr. [NAME]", "Prof. [NAME]"). */
const TITLE_WORDS: ReadonlySet<string> = wordSet(
  "mr mrs ms mx miss dr prof sr sra srta mme mlle herr frau sig dott rev fr sgt capt lt col gen hon",
);

/**
 * The candidates the tagger actually scores. A common word, a company or a place that no list
 * knows as a name ("Build", "Twilio") never is: it is most of a prompt's capitalised words, and
 * never a name; nor is a capitalised medical word no list knows as a name ("Hypoglycemia").
 */
export function isTaggerScored(token: Token): boolean {
  // A pronoun, a determiner, a contraction or a small joining word is nobody's name however it
  // is capitalised ("My psychiatrist has me on…", "We've tried…"), though a list may hold it ("My"
  // is a Vietnamese given name); nor is a title ("Mr. [NAME]'s").
  if (FUNCTION_WORDS.has(token.plain) || TITLE_WORDS.has(token.plain)) return false;
  // A lower-case word (most of a prompt) is settled by its standing first: it is looked up once
  // per token and kept, where the list lookup of `isTaggerCandidate` is not.
  if (!token.capitalised && standing(token) !== Standing.Strong && !isCaseless(token)) return false;
  if (!isTaggerCandidate(token)) return false;
  const known = standing(token);
  if (token.capitalised && known === Standing.Other) return false;
  // A lower-case name that is also a common word, a company or a place ("will", "mark", "may") is
  // never scored: such words were seven in ten of the words scored and almost never a name.
  if (!token.capitalised && !isCaseless(token) && known !== Standing.Strong) return false;
  return !(known === Standing.Unknown && taggerMedical(token));
}

/**
 * A word's standing as if capitalised: the tagger sees the case separately. A lower-case word no
 * list knows as a name is settled with one lookup (most of a prompt's words).
 */
export const taggerStanding = (token: TaggerToken): number => {
  // A capitalised word of ours already knows its standing (the rules looked it up): reuse it.
  if (token.capitalised) return "known" in token ? standing(token as Token) : standingOf(token.text, true);
  return vocab().names.has(fold(token.plain)) ? standingOf(token.text, true) : Standing.Other;
};
export const taggerMedical = (token: TaggerToken): boolean => vocab().medical.has(fold(token.plain));

/** Relatives after a possessive name: "Kelechi's sister". */
const RELATIVES = wordSet(
  "son daughter child kid kids baby mother mom mum father dad parents wife husband spouse partner brother sister grandson granddaughter grandmother grandfather grandma grandpa aunt uncle niece nephew cousin caregiver guardian family",
);
/** Verbs of people, right after a name: "Marisol lives in…", "Hollis is out". */
const PERSON_VERBS = wordSet(
  "lives lived turns turned called calls texted texts emailed emails said says sent sends wants wanted asked asks needs needed missed misses moved works worked prefers speaks uses signed approved left visited arrived died passed refused declined cancelled canceled rescheduled knows knew",
);
/** Verbs only people do, strong enough to mark a word no list knows: "Chukwuemeka says…". */
const SPEECH_VERBS = wordSet(
  "says said texted emailed asked told mentioned complained replied wrote confirmed insists insisted",
);
/**
 * What only a person does, right after a name that is also a word ("Joy reviewed", "Tamar owns",
 * "Grace wants"): with these, "Grace" is a person; "Summer", "Will", "Mark" too.
 */
const HUMAN_VERBS = wordSet(
  "wants wanted reviewed approved signed owns covers covered prefers thinks knows knew called calls texted emailed",
);
/** Words a chat message opens with before a name: "ok so grace is out", "lol frank just…". */
const CHAT_OPENERS = wordSet("ok okay so lol also btw fyi hey hi and but fwiw");
/** Words a names list may hold that, in lower case in a chat, are function words, pronouns, relatives or teams. */
const NOT_ADDRESSED: ReadonlySet<string> = new Set([
  ...FUNCTION_WORDS,
  ...wordSet(
    "then has have had just still now also there here what when where which while well yes not only even never always already soon again maybe some him who whom someone everyone anyone somebody everybody nobody mom dad mum mother father wife husband son daughter sister brother driver billing scheduling registration triage intake pharmacy legal compliance security ops support staff team nurse doctor admin",
  ),
]);
/** Verbs that address a person by name in a chat: "ask sunny if", "pinged mark about", "ty rich for". */
const ADDRESSING = wordSet("ask asked tell told ping pinged thanks thx ty cc");
/** A post on a team, after "on", "at", "from", "in": "the night shift", "the front desk", "billing". */
const POST =
  /^[ \t]{1,2}(?:the[ \t]{1,2})?(?:front[ \t]{1,2}desk|night[ \t]{1,2}shift|day[ \t]{1,2}shift|evening[ \t]{1,2}shift|billing|scheduling|registration|triage|intake[ \t]{1,2}desk|call[ \t]{1,2}center)\b/i;
/**
 * A team or a site, after "from", "in" or "at": "IT", "ops", "the lab", "the Ridgeview site". Only
 * after a name that opens its line or is asked ("chase from IT said…", "ask pat in billing"): after
 * any word, "lands in the billing queue" would do.
 */
const TEAM =
  /^[ \t]{1,2}(?:IT|HIM|[Oo]ps|[Bb]illing|[Pp]harmacy|[Rr]adiology|[Nn]ursing|[Cc]ompliance|the[ \t]{1,2}lab|the[ \t]{1,2}\p{Lu}[\p{L}'’-]{1,20}[ \t]{1,2}(?:site|office|clinic|campus|branch|location))\b/u;
/**
 * A person's role or relation in brackets after a name: "sunny (the night RN on 4 west)", "faith
 * (triage nurse)", "rose (patient, 34)".
 */
const ROLE_IN_BRACKETS =
  /^[ \t]{1,2}\((?:the[ \t]{1,2}|our[ \t]{1,2}|a[ \t]{1,2})?(?:[\p{L}-]{2,12}[ \t]{1,2}){0,2}?(?:rn|nurse|ma|np|pa|md|doctor|patient|pt|caregiver|intern|tech|technician|coordinator|manager|scheduler|receptionist|pharmacist|therapist|aide|cna|lpn|resident|fellow|attending|chaplain|worker|daughter|son|wife|husband|mom|dad|mother|father|sister|brother|grandson|granddaughter|niece|nephew)\b/iu;
/** After "is": a person's whereabouts on a team ("Ivy is out today", "June is on PTO"). */
const AWAY =
  /^is[ \t]{1,2}(?:out|off|covering|on[ \t]{1,2}(?:PTO|pto|call|vacation|leave|nights|days)|(?:still[ \t]{1,2})?(?:updating|working|handling|reviewing|fixing|testing|debugging|leading|running|hunting|owning|investigating|migrating)|the[ \t]{1,2}(?:new[ \t]{1,2})?(?:charge[ \t]{1,2})?(?:nurse|doctor|intern|lead|manager|pharmacist|coordinator|on-call|one[ \t]{1,2}who))\b/;
/** A placeholder of a name joined to what follows or precedes it: "[NAME] and Ash", "Lily and [NAME]". */
const NAME_BEFORE = /\[NAME\][ \t]{1,2}(?:and|&)[ \t]{1,2}$/;
const NAME_AFTER = /^[ \t]{1,2}(?:and|&)[ \t]{1,2}\[NAME\]/;
/** Nouns that make the words before them the names of things: "Florence and Sydney offices", "Babinski and Romberg fields". */
const OF_THINGS =
  /^[ \t]{1,2}(?:offices|fields|sites|clinics|teams|hospitals|campuses|locations|templates|tests|signs|scores)\b/;
/** Words before a capitalised word that make it part of a thing's name: "the Charge Nurse", "City of Hope". */
const THING_BEFORE = wordSet("of the a an team");

/** Words before a single lower-case name that is a person's: "for ravi". */
const PERSON_PREPOSITIONS = wordSet("for to with from by cc");
/** "the Okafor twins", "the Nguyen family". */
const FAMILY = wordSet("twins family household kids children parents sisters brothers");

/** A chat log line's time stamp, right before its speaker: "[13:02] ", "[9:14 AM] ". */
const CHAT_STAMP = /\[\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]\.?m\.?)?\]\s{1,2}$/i;
/** Speakers of a chat log that are no person's name. */
const SPEAKER_ROLES = wordSet(
  "me you caller agent bot system user patient pt nurse doctor dr admin support assistant staff operator ivr sms ai host guest customer member rep tech",
);

/** Headers of an email or a ticket, at the start of a line before ": ". */
const HEADER_WORDS = wordSet("from to cc bcc subject date re fwd sent reply status summary");

/** One or two spaces or tabs: the gap between the words of a phrase (one space, most gaps, without the pattern). */
function isSpaced(gap: string): boolean {
  return gap === " " || /^[ \t]{1,2}$/.test(gap);
}
/** The words before a post on a team: "dawn on the night shift", "rose from the front desk". */
const AT_POST = wordSet("on at from");
/** What precedes a team or a site after a name: "chase from IT", "hunter in IT", "dawn at the Ridgeview site". */
const AT_TEAM = wordSet("from in at");
/** Determiners before a noun: "the guy at the front desk". */
const DETERMINERS = wordSet("the a an this that our some any every");
/** Possessives before a relative: "my husband raymond"; in the third person, "Rose and her husband". */
const POSSESSIVES = wordSet("my her his their our");
const THIRD_PERSON = wordSet("her his their");

/** A word alone at the start of a line, right before ": " (not "ALL CAPS:", a heading). */
function isSpeakerAt(text: string, token: Token): boolean {
  if (text.charCodeAt(token.end) !== 58 || (token.start > 0 && text.charCodeAt(token.start - 1) !== 10)) return false;
  const after = text.charCodeAt(token.end + 1);
  return (after === 32 || Number.isNaN(after)) && !(token.allCaps && token.text.length > 1);
}

/** A word without its possessive "'s" ("Ana's" → "Ana"). */
function withoutPossessive(word: string): string {
  const length = word.length;
  return length > 1 && word.charCodeAt(length - 1) === 115 && isApostrophe(word.charCodeAt(length - 2))
    ? word.slice(0, -2)
    : word;
}

/**
 * Whether the name word at `i` (capitalised, not an ordinary word) is a person by what follows or
 * surrounds it (step 3b of `findNames`). The cheap checks of each sign come first: most name words
 * show none, and a long text has thousands.
 */
function isPersonByContext(text: string, tokens: readonly Token[], i: number): boolean {
  const token = tokens[i] as Token;
  const next = tokens[i + 1] as Token;
  const known = standing(token);
  const strong = known === Standing.Strong;
  const spaced = isSpaced(next.gap);
  // A possessive before a relative is a person even when no list knows the name ("Kelechi's sister").
  const possessiveGap = /^['’]s[ \t]{1,2}$/.test(next.gap);
  if (possessiveGap && RELATIVES.has(next.plain)) return true;
  if (strong && spaced && PERSON_VERBS.has(next.plain)) return true;
  // "the Okafor twins".
  if (strong && spaced && FAMILY.has(next.plain) && tokens[i - 1]?.plain === "the") return true;
  // "Ana's refill": a strong name owning something. Not after "St." or "Saint": "St. Luke's" is a hospital.
  if (
    strong &&
    possessiveGap &&
    !/^(?:st|saint)$/.test(tokens[i - 1]?.plain ?? "") &&
    !vocab().medical.has(fold(token.text))
  )
    return true;
  // A name that is also a word speaks as a person too: "Blessing said", "Chase says".
  if ((known === Standing.Unknown || known === Standing.Weak) && spaced && SPEECH_VERBS.has(next.plain)) return true;
  // "Rose and her husband", "Dolores and her grandson": a person beside their relative.
  if (
    next.plain === "and" &&
    spaced &&
    THIRD_PERSON.has(tokens[i + 2]?.plain ?? "") &&
    RELATIVES.has(tokens[i + 3]?.plain ?? "")
  )
    return true;
  if (known === Standing.Other) return false;
  // Where a person works: "Dawn on the night shift says", "Pearl at the front desk".
  if ((AT_POST.has(next.plain) || next.plain === "in") && spaced && POST.test(text.slice(next.end, next.end + 24)))
    return true;
  // A name that is also a word doing what only people do, or away from work: "Joy reviewed the
  // mapping", "Ivy is out today"; not the last word of a thing's name: "the Charge Nurse wants",
  // "City of Hope wants".
  const acting = (spaced && HUMAN_VERBS.has(next.plain)) || next.plain === "is";
  if (acting) {
    const previous = tokens[i - 1];
    const alone =
      previous === undefined ||
      /[.!?\n]/.test(token.gap) ||
      (!previous.capitalised && !THING_BEFORE.has(previous.plain));
    if (alone && spaced && HUMAN_VERBS.has(next.plain)) return true;
    if (alone && AWAY.test(text.slice(token.end, token.end + 32).trimStart())) return true;
  }
  // A listed name beside a name already taken: "[NAME] and Ash are the kids".
  if (known !== Standing.Strong && known !== Standing.Weak) return false;
  const joined =
    tokens[i - 1]?.plain === "and" || token.gap.includes("&") || next.plain === "and" || next.gap.includes("&");
  return (
    joined &&
    (NAME_BEFORE.test(text.slice(Math.max(0, token.start - 12), token.start)) ||
      NAME_AFTER.test(text.slice(token.end, token.end + 12))) &&
    !OF_THINGS.test(text.slice(token.end, token.end + 16))
  );
}

/**
 * Whether a token can be a login by its form: small ASCII letters only, five to sixteen of them
 * (or a surname after an initial and a dot), not inside a path, an address or a domain.
 */
function isLoginShaped(text: string, token: Token): boolean {
  const length = token.end - token.start;
  if (length < 4 || length > 16 || token.capitalised || token.text !== token.plain) return false;
  for (let k = token.start; k < token.end; k++) {
    const code = text.charCodeAt(k);
    if (code < 97 || code > 122) return false;
  }
  const before = text.charCodeAt(token.start - 1);
  const after = text.charCodeAt(token.end);
  // Not a path's, an address's or a domain's part, nor a flag's.
  if (before === 47 || before === 64 || before === 92 || before === 45 || before === 95) return false;
  if (
    after === 64 ||
    after === 47 ||
    after === 92 ||
    after === 95 ||
    (after === 46 && isWordCharAt(text, token.end + 1))
  )
    return false;
  return length >= 5 || text.charCodeAt(token.start - 1) === 46;
}

function isWordCharAt(text: string, at: number): boolean {
  const code = text.charCodeAt(at);
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57);
}

/** Words a login follows: who did something, whom it went to, which account. */
const LOGIN_CUES = wordSet(
  "by user users owner owners assignee reporter reviewer approver author cc dm ping pinged returns blame sudo login",
);

/**
 * Whether a login may stand here: after one of `LOGIN_CUES` (as a word or a key), or in backticks,
 * brackets or parentheses of its own ("(gmensah)", "TODO(rkapoor)"). Not after "to", "for" or in
 * quotes: there a misspelt word ("to swich", "for groop") or a JSON key is as likely.
 */
function isLoginContext(text: string, first: Token, previous: Token | undefined, last: Token): boolean {
  if (previous !== undefined && LOGIN_CUES.has(previous.plain) && /^[ \t]{1,2}@?$|^[ \t]*[:=][ \t]*$/.test(first.gap))
    return true;
  const before = text.charAt(first.start - 1);
  const after = text.charAt(last.end);
  return (
    (before === "`" && after === "`") ||
    (before === "(" && after === ")") ||
    (before === "<" && after === ">") ||
    (before === "[" && after === "]")
  );
}

/** Whether a list holds the word of this hash as a word, a term, a company or a place. */
function isListedThing(hash: number): boolean {
  const { words, commonElsewhere, orgs, places, medical } = vocab();
  return (
    words.hasHash(hash) ||
    commonElsewhere.hasHash(hash) ||
    orgs.hasHash(hash) ||
    places.hasHash(hash) ||
    medical.hasHash(hash)
  );
}

/** A surname a login may carry: a name, and no word, term, company or place. */
function isSurname(word: string): boolean {
  if (word.length < 4) return false;
  const hash = Bloom.hashOf(word);
  return vocab().names.hasHash(hash) && !isListedThing(hash);
}

/**
 * An initial and a surname run together ("tnguyen", "gadeyemi"), or a surname after an initial
 * and a dot (`dotted`: "e.lindgren"); and the whole no word a list holds ("shall", "agreed").
 */
function isLogin(plain: string, dotted: boolean): boolean {
  if (dotted) return isSurname(plain);
  return isSurname(plain.slice(1)) && !isListedThing(Bloom.hashOf(plain));
}

/** Another identifier (or its placeholder) this close before or after a name supports it. */
const NEAR_CHARS = 24;
const PLACEHOLDER_NEAR = /\[[A-Z_]{2,12}\]/;

/**
 * Every person's name in `text`, as spans. `taken` says which characters another detector already
 * claimed; `identifierNear` whether one claimed something in a window.
 */
export function findNames(
  text: string,
  taken: (start: number, end: number) => boolean,
  identifierNear: (start: number, end: number) => boolean = () => false,
  /** Whether `text` begins where a message or a line does (a later pass's window may begin mid-sentence). */
  opensMessage = true,
): NameSpan[] {
  if (!/\p{L}/u.test(text)) return [];
  const tokens = tokenize(text);
  const spans: NameSpan[] = [];
  const covered = new Uint8Array(tokens.length);
  const add = (from: number, to: number) => {
    const start = tokens[from]?.start ?? 0;
    const end = tokens[to - 1]?.end ?? 0;
    if (to <= from || taken(start, end)) return;
    for (let k = from; k < to; k++) if (covered[k] === 1) return;
    covered.fill(1, from, to);
    spans.push({ start, end });
  };

  // 1. After a cue: a label, a relationship, a greeting, a signature or a key.
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (token === undefined || covered[i] === 1) continue;
    // Only a word that could begin a name is worth its cues: capitalised, or a strong name.
    if (!token.capitalised && standing(token) !== Standing.Strong) continue;
    if (!mayFollowCue(tokens, i)) continue;
    const before = text.slice(Math.max(0, token.start - 40), token.start);
    // Each cue pattern is tried only where the word or the punctuation it ends with is there: a
    // header's or a key's colon in the gap, a title or a greeting as the word before.
    const previous = tokens[i - 1]?.plain;
    const labelMark = token.gap.includes(":") || token.gap.includes("=");
    const header = labelMark && HEADER.test(before);
    const key = header || (labelMark && KEY.test(before));
    const role = key || !ROLE_CUE_ENDS.test(before) ? null : ROLE_CUE.exec(before);
    const continued = token.gap.includes(",") && /\[NAME\],\s{1,2}$/.test(before);
    const labelled = key || continued || role?.groups?.separator !== undefined;
    const titled = previous !== undefined && TITLE_CUE_WORDS.has(previous) && TITLE_CUE.test(before);
    const person = key || role !== null || titled || PERSON_CUE.test(before);
    // A dash signs off after a word, not after a number: "Clinic 01 — Fairview" names a place.
    const signed =
      /[-—–~]/.test(token.gap) && !/\d[ \t]*[-—–~]/.test(text.slice(Math.max(0, token.start - 4), token.start));
    const greeted = (previous !== undefined && GREETING_WORDS.has(previous)) || signed;
    // After a greeting or a sign-off, only a capitalised word: "-- dry-run" is a flag, not a name.
    if (!(person || (greeted && (token.capitalised || standing(token) === Standing.Strong) && GREETING.test(before))))
      continue;
    // Capitals ("DEMIR YUSUF") only after a label or a key, not after an earlier name's comma.
    // A header in capitals ("TO: ONCOLOGY SCHEDULING") names a department as often as a person.
    const end = nameAfterCue(tokens, i, labelled, labelled && !continued && !header);
    // After a bare role word ("patient Ana"), one capitalised word is too weak a sign; after a
    // title in capitals ("NP Whitaker", "Nurse Grant") it is enough.
    const needed = role !== null && !labelled && !titled ? 2 : 1;
    if (nameWords(tokens.slice(i, end)).length >= needed && end > i) {
      add(i, end);
      i = end - 1;
    }
  }

  // 2. Capitalised runs that are names on their own: "Jane Doe", "Chidi Okafor", "Willem van der Berg".
  for (let i = 0; i < tokens.length; i++) {
    if (covered[i] === 1 || !tokens[i]?.capitalised) continue;
    let end = i + 1;
    while (end < tokens.length) {
      const next = tokens[end];
      if (next === undefined || covered[end] === 1 || !joins(next, tokens[end - 1])) break;
      if (!(next.capitalised || next.particle)) break;
      end++;
    }
    // Split the run at words that cannot be part of a name, and try each piece.
    let from = i;
    for (let k = i; k <= end; k++) {
      const token = tokens[k];
      const stops = k === end || token === undefined || !(isNameWord(token) || token.particle || token.initial);
      if (!stops) continue;
      let a = from;
      let b = k;
      while (a < b && tokens[a]?.particle) a++;
      while (b > a && tokens[b - 1]?.particle) b--;
      const windowStart = Math.max(0, (tokens[a]?.start ?? 0) - NEAR_CHARS);
      const windowEnd = (tokens[b - 1]?.end ?? 0) + NEAR_CHARS;
      const near =
        b > a && (identifierNear(windowStart, windowEnd) || PLACEHOLDER_NEAR.test(text.slice(windowStart, windowEnd)));
      if (acceptedWithoutCue(tokens.slice(a, b), near)) add(a, b);
      from = k + 1;
    }
    i = end - 1;
  }

  // 3. "Last, First" with both strong names ("Torres, Esperanza L"): a list of surnames is names too.
  // Upper case too, as schedules, wristbands and OCR print them ("DEMIR, YUSUF"), where the comma
  // may lose its space or be HL7's caret ("KOWALSKI,ADAM", "LANGE^PETER").
  for (let i = 0; i + 1 < tokens.length; i++) {
    const last = tokens[i];
    const first = tokens[i + 1];
    if (last === undefined || first === undefined || covered[i] === 1 || covered[i + 1] === 1) continue;
    // Most gaps are a space: settled by their first character before any pattern.
    const mark = first.gap.charCodeAt(0);
    if (mark !== 44 && mark !== 94) continue;
    const capitals = last.allCaps && first.allCaps;
    if (!(capitals ? /^(?:,[ \t]{0,2}|\^)$/ : /^,[ \t]{1,2}$/).test(first.gap)) continue;
    const nameLike = (token: Token) =>
      token.capitalised && token.text.length > 1 && standing(token) === Standing.Strong;
    if (!nameLike(last) || !nameLike(first) || last.allCaps !== first.allCaps) continue;
    if (first.gap === "^") {
      // Each part on its own, so HL7's separator stays: "LANGE^PETER" → "[NAME]^[NAME]".
      add(i, i + 1);
      add(i + 1, i + 2);
      continue;
    }
    let end = i + 2;
    const initial = tokens[end];
    if (initial?.capitalised && initial.text.length === 1 && joins(initial, first)) end++;
    // Compound surnames and middle names around it: "GONZÁLEZ RAMÍREZ, JOSÉ LUIS".
    const alike = (token: Token | undefined, k: number): token is Token =>
      token !== undefined &&
      covered[k] === 0 &&
      token.capitalised &&
      token.allCaps === last.allCaps &&
      token.text.length > 1 &&
      standing(token) !== Standing.Other;
    let start = i;
    while (i - start < 2 && alike(tokens[start - 1], start - 1) && joins(tokens[start] as Token, tokens[start - 1]))
      start--;
    while (end - i < 4 && alike(tokens[end], end) && joins(tokens[end] as Token, tokens[end - 1])) end++;
    add(start, end);
  }

  // 3a. Two or three words in capitals that are all strong names, as rosters and wristbands print a
  // name without its comma: "SCHULTZ HERMAN", "RAJAGOPALAN VIJAYALAKSHMI" (a word that is also a
  // common one, "ROSE GARDEN", or an acronym does not count).
  for (let i = 0; i + 1 < tokens.length; i++) {
    let end = i;
    while (
      end < tokens.length &&
      end - i < 3 &&
      covered[end] === 0 &&
      tokens[end]?.allCaps === true &&
      (tokens[end]?.text.length ?? 0) > 2 &&
      !ACRONYMS.has(tokens[end]?.plain ?? "") &&
      standing(tokens[end] as Token) === Standing.Strong &&
      (end === i || joins(tokens[end] as Token, tokens[end - 1]))
    )
      end++;
    if (end - i >= 2 && !(tokens[end]?.allCaps === true && joins(tokens[end] as Token, tokens[end - 1]))) {
      add(i, end);
      i = end - 1;
    }
  }

  // 3b. One strong name that a person's word follows: "Kelechi's sister", "Alfreda turns 90",
  // "Imani sent it over", "the Okafor twins".
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    const next = tokens[i + 1];
    if (token === undefined || next === undefined || covered[i] === 1 || !isNameWord(token)) continue;
    if (isPersonByContext(text, tokens, i)) add(i, i + 1);
  }

  // 3c. One lower-case strong name after "for", "to", "with": "claim no. [ACCOUNT] for ravi".
  for (let i = 1; i < tokens.length; i++) {
    const token = tokens[i];
    const previous = tokens[i - 1];
    if (token === undefined || previous === undefined || covered[i] === 1) continue;
    // Lower case only: capitalised, a product is as likely ("send to Slack").
    if (token.capitalised || standing(token) !== Standing.Strong || token.text.length < 4) continue;
    if (!PERSON_PREPOSITIONS.has(previous.plain) || !isSpaced(token.gap)) continue;
    if (vocab().medical.has(token.plain)) continue;
    add(i, i + 1);
  }

  // 3c". A lower-case name a list knows, at a post on a team: "rose from the front desk says…",
  // "dawn on the night shift", "chase from IT", "pat in billing", "dawn at the Ridgeview site"; or
  // with a role in brackets: "faith (triage nurse)".
  for (let i = 0; i + 1 < tokens.length; i++) {
    const token = tokens[i];
    const next = tokens[i + 1];
    if (token === undefined || next === undefined || covered[i] === 1 || token.capitalised) continue;
    if (token.text.length < 3) continue;
    // A team, or a role in brackets, only after a name that opens its line or is asked.
    const opensLine = i === 0 ? opensMessage : token.gap.includes("\n") && /\n[ \t]*$/.test(token.gap);
    const named = opensLine || ADDRESSING.has(tokens[i - 1]?.plain ?? "");
    const atPost = AT_POST.has(next.plain) && isSpaced(next.gap);
    if (!atPost && !named) continue;
    const after = text.slice(next.end, next.end + 40);
    const posted =
      (atPost && POST.test(after)) || (named && AT_TEAM.has(next.plain) && isSpaced(next.gap) && TEAM.test(after));
    if (!posted && !(named && ROLE_IN_BRACKETS.test(text.slice(token.end, token.end + 48)))) continue;
    if (!vocab().names.has(fold(token.plain))) continue;
    // "the guy at the front desk": a noun after a determiner.
    if (DETERMINERS.has(tokens[i - 1]?.plain ?? "")) continue;
    add(i, i + 1);
  }

  // 3c#. A lower-case name a list knows, in a chat message: at its start doing what people do
  // ("grace is out", "gene wants the bot paused", "so cash is out sick"), or asked, pinged or
  // thanked ("ask sunny if…", "pinged mark about it", "ty rich for…"). Not after a determiner, and
  // not a medical word. The words around it are asked first: most words have neither.
  for (let i = 0; i + 1 < tokens.length; i++) {
    const token = tokens[i];
    const next = tokens[i + 1];
    if (token === undefined || next === undefined || covered[i] === 1 || token.capitalised || token.text.length < 3)
      continue;
    const previous = tokens[i - 1];
    const acting = HUMAN_VERBS.has(next.plain) || SPEECH_VERBS.has(next.plain) || next.plain === "is";
    const addressing = previous !== undefined && ADDRESSING.has(previous.plain);
    if (!acting && !addressing) continue;
    // A placeholder between ("[NAME] has called") makes the word no message's first.
    const opens =
      !token.gap.includes("]") &&
      (previous === undefined ? opensMessage : /[.!?\n:]/.test(token.gap) || CHAT_OPENERS.has(previous.plain));
    const acts =
      acting &&
      opens &&
      isSpaced(next.gap) &&
      (next.plain !== "is" || AWAY.test(text.slice(next.start, next.start + 48)));
    const addressed =
      addressing &&
      isSpaced(token.gap) &&
      /^(?:[ \t]{0,2}[,.!?]|[ \t]{1,2}(?:if|about|for|to)\b|[ \t]*$|[ \t]*\n)/.test(
        text.slice(token.end, token.end + 8),
      );
    if (!acts && !addressed) continue;
    if (NOT_ADDRESSED.has(token.plain) || !vocab().names.has(fold(token.plain)) || vocab().medical.has(token.plain))
      continue;
    add(i, i + 1);
  }

  // 3c+. A lower-case name a list knows right after a relative, then a pause: "calling for my
  // husband raymond, he can't…", "per her daughter nkem." (not "my son will call").
  for (let i = 2; i < tokens.length; i++) {
    const token = tokens[i];
    if (token === undefined || covered[i] === 1 || token.capitalised || token.text.length < 3) continue;
    if (!RELATIVES.has(tokens[i - 1]?.plain ?? "") || !POSSESSIVES.has(tokens[i - 2]?.plain ?? "")) continue;
    const after = text.charAt(token.end);
    if (!(after === "" || /[,.;:!?)"'\n]/.test(after)) || !vocab().names.has(fold(token.plain))) continue;
    add(i, i + 1);
  }

  // 3c'. One capitalised strong name, alone, after "to", "by", "with", "cc": "route anything from
  // Aetna to Marcus", "reviewed by Paulina". Strong: no common word, company or place ("to Slack").
  for (let i = 1; i < tokens.length; i++) {
    const token = tokens[i];
    const previous = tokens[i - 1];
    if (token === undefined || previous === undefined || covered[i] === 1 || !token.capitalised) continue;
    if (token.allCaps || standing(token) !== Standing.Strong || !isSpaced(token.gap)) continue;
    if (!PERSON_PREPOSITIONS.has(previous.plain) || previous.plain === "for") continue;
    const next = tokens[i + 1];
    if (next?.capitalised && joins(next, token)) continue;
    if (vocab().medical.has(token.plain)) continue;
    add(i, i + 1);
  }

  // 3d. The speaker of a chat log line: "[13:02] nadia: eligibility…" — a name a list knows, in
  // any case, and no role ("[13:02] caller:", "[13:02] me:").
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (token === undefined || covered[i] === 1 || text.charCodeAt(token.end) !== 58) continue;
    if (text.charCodeAt(token.start - 1) !== 32 && text.charCodeAt(token.start - 1) !== 9) continue;
    if (!CHAT_STAMP.test(text.slice(Math.max(0, token.start - 24), token.start))) continue;
    if (SPEAKER_ROLES.has(token.plain) || !vocab().names.has(fold(token.plain))) continue;
    add(i, i + 1);
  }

  // 3e. The speaker at the start of a line, in a transcript (two lines or more start with a word
  // and ": "), as stand-ups and pasted threads write them: "Hoàng: reviewing the PR", "mireia: try
  // the neural one". A listed name, not a role, a header, a product's or a place's name.
  let speakerLines = -1;
  const { names, orgs, places } = vocab();
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (token === undefined || covered[i] === 1 || !isSpeakerAt(text, token)) continue;
    if (SPEAKER_ROLES.has(token.plain) || HEADER_WORDS.has(token.plain)) continue;
    // A listed name, not a product's or a place's ("Slack:", "Georgia:").
    const folded = fold(token.plain);
    if (!names.has(folded) || orgs.has(folded) || places.has(folded)) continue;
    const known = standingOf(token.text, true);
    if (known !== Standing.Strong && known !== Standing.Weak) continue;
    if (speakerLines === -1) speakerLines = tokens.filter((other) => isSpeakerAt(text, other)).length;
    if (speakerLines < 2) continue;
    add(i, i + 1);
  }

  // 4. A capitalised pair joined to a name by "and", "&" or a comma ("Park Ji-hoon and Kim Soo-yeon").
  for (let i = 0; i + 1 < tokens.length; i++) {
    if (covered[i] === 1 || covered[i + 1] === 1) continue;
    const first = tokens[i] as Token;
    const second = tokens[i + 1] as Token;
    if (!isNameWord(first) || !isNameWord(second) || !joins(second, first)) continue;
    // "Blue Cross" next to a name is still two ordinary words.
    if (standing(first) === Standing.Weak && standing(second) === Standing.Weak) continue;
    const after = tokens[i + 2];
    const beforeIndex = i - 1;
    const linkedAfter =
      after !== undefined && covered[i + 2] === 1 && /^\s{0,2}(?:and|&|,|or)\s{1,2}$/i.test(after.gap);
    const linkedBefore =
      beforeIndex >= 0 && covered[beforeIndex] === 1 && /^\s{0,2}(?:and|&|,|or)\s{1,2}$/i.test(tokens[i]?.gap ?? "");
    const andWord = tokens[i + 2]?.text.toLowerCase() === "and" && covered[i + 3] === 1;
    if (linkedAfter || linkedBefore || andWord) add(i, i + 2);
  }

  // 5. Lower-case runs of two or three strong names ("kwame mensah"): no ordinary words look so.
  const run: number[] = [];
  for (let i = 0; i + 1 < tokens.length; i++) {
    run.length = 0;
    for (let k = i; k < tokens.length && run.length < 3; k++) {
      const token = tokens[k];
      if (token === undefined || covered[k] === 1 || token.capitalised) break;
      if (run.length > 0 && !joins(token, tokens[k - 1])) break;
      if (!(standing(token) === Standing.Strong || (run.length > 0 && token.particle))) break;
      run.push(k);
    }
    while (run.length > 0 && tokens[run[run.length - 1] as number]?.particle) run.pop();
    if (run.length >= 2 && run.filter((k) => !tokens[k]?.particle).length >= 2) {
      add(run[0] as number, (run[run.length - 1] as number) + 1);
      i = run[run.length - 1] as number;
    }
  }

  // 5b. Names in Han, kana or Hangul, written family name first ("佐藤 花子", "김 민준"): in a
  // builder's English prompt a pair of such words is a person before anything else; a pair inside
  // a longer run of such words is part of a sentence ("예약 알림 봇이 한국어 …").
  for (const match of CJK_SCRIPT.test(text) ? text.matchAll(CJK_PAIR) : []) {
    const start = match.index;
    const end = start + match[0].length;
    if (!taken(start, end) && !spans.some((span) => start < span.end && span.start < end)) spans.push({ start, end });
  }

  // 5c. What the learned tagger reads as part of a name among the words left (name-tagger.ts).
  const tagger = nameTagger();
  if (tagger !== null) {
    let from = -1;
    for (let k = 0; k <= tokens.length; k++) {
      const token = tokens[k];
      const accepted =
        token !== undefined &&
        covered[k] === 0 &&
        isTaggerScored(token) &&
        !(token.allCaps && ACRONYMS.has(token.plain)) &&
        tagger.accepts(tokens, k, taggerStanding, taggerMedical);
      if (accepted && from !== -1 && joins(token, tokens[k - 1])) continue;
      if (from !== -1) add(from, k);
      from = accepted ? k : -1;
    }
  }

  // 5d. A login made of an initial and a surname, as companies issue them, where a login is
  // written (`isLoginContext`): "run by gadeyemi", "owned by user dkowalski", "Assignee:
  // e.lindgren", "(gmensah)", "TODO(rkapoor)". The surname must be a name no list holds as a word,
  // and the login no word itself ("shall" is no s. Hall, "billing" no b. Illing).
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    if (covered[i] === 1 || !isLoginShaped(text, token)) continue;
    const previous = tokens[i - 1];
    // "e.lindgren": the initial is a token of its own, joined by the dot.
    const dotted = previous !== undefined && previous.text.length === 1 && token.gap === "." && covered[i - 1] === 0;
    const first = dotted ? previous : token;
    if (!isLoginContext(text, first, tokens[dotted ? i - 2 : i - 1], token)) continue;
    if (isLogin(token.plain, dotted)) add(dotted ? i - 1 : i, i + 1);
  }

  // 6. Every other occurrence of a word of a name already found ("Jane Doe … Jane called").
  const found = new Set<string>();
  tokens.forEach((token, k) => {
    if (covered[k] === 1 && token.capitalised && token.text.length > 2 && standing(token) !== Standing.Other)
      found.add(withoutPossessive(token.text));
  });
  if (found.size > 0) {
    tokens.forEach((token, k) => {
      if (covered[k] === 0 && found.has(withoutPossessive(token.text))) add(k, k + 1);
    });
  }
  return spans.sort((a, b) => a.start - b.start);
}
