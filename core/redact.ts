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

import { HEALTH_ORGANIZATIONS } from "./safety/health-orgs.ts";
import { findNames } from "./safety/names.ts";
import { type DigitFloor, digitFloor, digitsOf } from "./safety/digit-floor.ts";
import { fold } from "./safety/fold.ts";
import { Literals, literalText, TextGrams } from "./safety/literal-floor.ts";
import { numberCandidates, numberTagger } from "./safety/number-tagger.ts";
import { DOCUMENT_EXTENSIONS, findSegmentIdentifiers } from "./safety/segments.ts";
import { spokenView } from "./safety/spoken.ts";
import { vocab } from "./safety/vocab.ts";

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

/**
 * Between a label and its value: spaces, `:`, `#`, `=`, "is", "of", "no.", a key's closing quote
 * (`"dob": "…`), a short parenthesis ("member id (Cigna) …"); at most four of them.
 */
const SEP = String.raw`(?:\s{0,3}(?:[:#=\-–—|]|\.(?=\s)|["'](?=\s{0,3}[:=])|is\b|was\b|are\b|of\b|reads\b|changed\b|to\b|now\b|as\b|es\b|é(?=\s)|no\b\.?|number\b|num\b\.?|nbr\b|\((?!\d)[^()\n]{1,24}\))){0,4}\s{0,3}(?:\[\s{0,2})?["'(]?\s{0,2}`;
/** Between the words of a label: "member id", "member_id", "memberId", "member-id". */
const _ = String.raw`[\s_\-.]{0,2}`;
/** A label suffix: "member id", "member #", "member number", "member no." */
const NO = String.raw`(?:${_}(?:ids?|identifier|#|number|no\.?|num\.?|nbr))`;
/** An identifier value: letters, digits, dashes and inner dots, with at least one digit. */
const ID = String.raw`(?=[A-Za-z0-9.\-]{0,63}\d)(?!\d{1,9}(?:\.\d{1,9})+(?![\w\-.]))[A-Za-z0-9](?:[A-Za-z0-9\-]|\.(?=[A-Za-z0-9])){2,63}(?![\w\-])`;
/** An identifier printed in groups, as on a card: "JQX 8812 0934", "123 456 789". */
const GROUPED_ID = String.raw`[A-Z0-9]{2,6}(?: (?=[A-Z0-9]{0,9}\d)[A-Z0-9]{2,10}(?:-[A-Z0-9]{1,4})?){1,3}(?![\w\-])`;

/** Months in English, and in the Spanish, Portuguese and French of forms builders paste. */
/** Letters, then digits in two groups or more: "PN 2209 4471", "SB 0044 1209" (not "ending 4417"). */
const LETTERS_GROUPS = String.raw`[A-Z]{1,4} \d{2,5}(?: \d{2,5}){1,3}(?![\w\-])`;
/**
 * An IBAN, in its groups of four or not: "DE44 5001 0517 5407 3249 31". Each group holds a digit:
 * the labels match in any case, and "DE12 with" is no IBAN.
 */
const IBAN = String.raw`[A-Z]{2}\d{2}(?: ?(?=[A-Z]{0,3}\d)[A-Z0-9]{4}){2,7}(?: ?\d{1,3})?(?![\w\-])`;
/** Digits printed in groups, as a statement or a label prints them: "4471 0029 118", "4471 2290 0018". */
const DIGIT_GROUPS = String.raw`\d{3,5}(?: \d{2,5}){1,4}(?![\w\-]|\s{0,2}(?:%|ms|mg|kg|days?|hours?|min|minutes?|rows?|items?|patients?|pages?|times?)\b)`;

const MONTH = `(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|diciembre|janeiro|fevereiro|março|maio|junho|julho|setembro|outubro|novembro|dezembro|janvier|février|mars|avril|mai|juin|juillet|août|septembre|octobre|novembre|décembre)`;
/**
 * Months in German, Italian and Polish (its genitive, as dates write it), read only in a whole
 * date with its day and year ("7. März 2024", "7 marca 1936"): every other date pattern tries
 * `MONTH` at every word, and these would make it dearer for dates builders rarely write.
 */
const MONTH_ABROAD = `(?:Januar|Jänner|Februar|März|Juni|Juli|Oktober|Dezember|gennaio|febbraio|aprile|maggio|giugno|luglio|settembre|ottobre|dicembre|stycznia|lutego|marca|kwietnia|maja|czerwca|lipca|sierpnia|września|października|listopada|grudnia)`;
/** Months in Dutch, Russian (genitive and abbreviated), Turkish and Hindi, read only after a day. */
const MONTH_OTHER = `(?:januari|februari|maart|mei|augustus|oktober|mrt|okt|января|февраля|марта|апреля|мая|июня|июля|августа|сентября|октября|ноября|декабря|янв|фев|мар|апр|июн|июл|авг|сент?|окт|ноя|дек|Ocak|Şubat|Mart|Nisan|Mayıs|Haziran|Temmuz|Ağustos|Eylül|Ekim|Kasım|Aralık|जनवरी|फ़रवरी|फरवरी|मार्च|अप्रैल|मई|जून|जुलाई|अगस्त|सितंबर|अक्टूबर|नवंबर|दिसंबर)`;
const ORD = `(?:st|nd|rd|th)?`;
/** A date written without separators, with a plausible year, month and day: "20240307". */
const YYYYMMDD = String.raw`(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])`;
/** Numeric dates must carry a year; dotted ones a 4-digit one, so "1.2.24" stays a version. */
const NUMERIC_DATES = [
  String.raw`\d{1,2}[/\-]\d{1,2}[/\-](?:\d{4}|\d{2})(?!\d)`,
  String.raw`\d{1,2}\.\d{1,2}\.\d{4}(?!\d)`,
  String.raw`\d{4}[/\-]\d{1,2}[/\-]\d{1,2}(?!\d)`,
  // Dotted ISO ("2023.10.03"), only with a plausible year, month and day: otherwise a version.
  String.raw`(?:19|20)\d{2}\.(?:0?[1-9]|1[0-2])\.(?:0?[1-9]|[12]\d|3[01])(?!\d)`,
];
/** Written dates with a day, starting with the day or with a digit. */
const DAY_FIRST_DATES = [
  String.raw`\d{1,2}(?:${ORD}|\.)\s{1,3}(?:(?:of|de)\s{1,3})?(?:${MONTH}|${MONTH_ABROAD})\.?,?\s{1,3}(?:(?:de|del)\s{1,3})?\d{4}(?!\d)`,
  String.raw`\d{1,2}${ORD}\s{1,3}(?:(?:of|de)\s{1,3})?${MONTH}\b\.?`,
];
/**
 * Before a month's name, what must follow it: a word of 3 to 13 characters, then a number. Tested
 * first, it spares trying every month's name at every word (zero-width tests at one position
 * commute, so the matches are the same).
 */
const MONTH_THEN_DAY = String.raw`(?=[^\s\d]{3,13}\s{1,3}\d)`;
const MONTH_FIRST_DATES = [
  String.raw`${MONTH_THEN_DAY}${MONTH}\.?\s{1,3}\d{1,2}${ORD},?\s{1,3}\d{4}(?!\d)`,
  String.raw`${MONTH_THEN_DAY}${MONTH}\.?\s{1,3}\d{1,2}${ORD}(?![\w:])`,
];
/** After a DOB label anything date-like counts: a bare year, 19800314, 3.14.80. */
const DOB_VALUE = `(?:${[
  ...MONTH_FIRST_DATES,
  String.raw`${MONTH}\.?,?\s{1,3}\d{4}(?!\d)`,
  ...DAY_FIRST_DATES,
  String.raw`\d{1,2}[/.\-]\d{1,2}[/.\-](?:\d{4}|\d{2})(?!\d)`,
  String.raw`\d{4}[/.\-]\d{1,2}[/.\-]\d{1,2}(?:T[\d:.]{5,12}(?:Z|[+\-]\d{2}:?\d{2})?)?(?![\d\w])`,
  String.raw`\d{1,2}-${MONTH}-\d{2,4}(?!\d)`,
  String.raw`\d{1,2}[/\-]\d{4}(?!\d)`,
  String.raw`\d{8}(?!\d)`,
  String.raw`\d{6}(?!\d)`,
  String.raw`\d{4}(?!\d)`,
].join("|")})`;

/**
 * What comes before a date that has no year, or no separator ("f/u 3/21", "surgery was on
 * 20240307", "Botox session 3.7.24", "(0008,0020) 20240307"): a word of care or of time, a day of
 * the week, a DICOM date tag, or an earlier date of a list or a range ("[DATE], 3/5", "[DATE]–3/7").
 */
const DATE_CUE_BEFORE = String.raw`(?:(?:\b(?:on|appt|appointment|visits?|dos|date|dated|admitted|discharged|seen|scheduled|(?:rescheduled|moved|changed|pushed)\s{1,2}to|was|until|till|thru|through|since|due|tues?|wed|thurs?|fri|sat|sun|mon|monday|tuesday|wednesday|thursday|friday|saturday|sunday|says|shows?|reads|drawn|called|collected|resulted|post-op|clinic|thu|readmitted|delivered|born|faxed|colonoscopy|surgery|biopsy|infusion|procedure|d\/c|operaron|el|for|from|back|as|(?:return(?:ed)?|back)\s{1,2}by|sessions?|events?|stay|f\/u|follow-?up|study|adm|admit|readmit(?:ted)?|rtn|labs?|starting|em|il|przyjęty|przyjęta|wypisany|wypisana|deceduto|deceduta|verst\.?|fallecido|fallecida|falecido|falecida|s\/p|POD\s?#?\d{0,2}|LMP|given|passed|expected|review|booked|witnessed|interrogated|rcvd|received|triage|(?:positive|negative|pregnancy|covid|flu|strep)\s{1,2}test|(?:morning|evening|night|afternoon)\s{1,2}of|week\s{1,2}of|instead\s{1,2}of|(?:tomorrow|today|yesterday|i\.e\.),?)|\[DATE\](?:,|\s{1,2}(?:and|or|to|through|-)))\s{1,2}(?:(?:the|on|is|was|done)\s{1,2})?["']?|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day,\s{1,2}|\(00(?:08|10),00[23]\d\)\s{1,2}|\[DATE\][–-])`;

/** An age over 89 in words in Spanish, Portuguese, French, German or Italian, before the word for years. */
const AGE_ABROAD = String.raw`(?:noventa(?:\s{1,2}[ye]\s{1,2}\p{L}+)?|cien(?:to\s{1,2}\p{L}+)?|cem|cento(?:\s{1,2}e\s{1,2}\p{L}+|\p{L}+)?|quatre-vingt-(?:dix|onze|douze|treize|quatorze|quinze|seize)(?:-\p{L}+)?|nonante(?:-\p{L}+){0,2}|cent(?:\s{1,2}\p{L}+)?|(?:\p{L}+und)?neunzig|hundert\p{L}*|novanta\p{L}*)`;

/** A word that may stand between a person and their age: "she's nearly 95", "is almost ninety". */
const NEARLY = String.raw`(?:nearly|almost|about|around|over|just|barely|now|already)\s{1,2}`;
/** One person, as an age's sentence names them: "my mother, 92", "the decedent, 101". */
const PERSON_NOUN = `(?:mother|mom|mum|father|dad|grandmother|grandma|granny|nana|grandfather|grandpa|husband|wife|aunt|uncle|widow|widower|resident|member|client|caller|decedent|centenarian|veteran|woman|man|lady|gentleman|gent)`;

/** An extension: not the start of something else ("x0.a@a.aa" is an email, a fast-check counterexample). */
const EXTENSION = String.raw`(?:\s{0,2}(?:x|ext\.?|extension)\s{0,2}\d{1,6}(?!\w|\.\w|\S{0,64}@))?`;
const US_PHONE = String.raw`(?:\+?1[\s.\-]?)?(?:\(\d{3}\)\s?|\d{3}[\s.\-/]?)\d{3}[\s.\-/]?\d{4}${EXTENSION}`;
/** "+44 20 7946 0958", "+91 98765 43210", "030 12345678" after a label. */
const INTL_PHONE = String.raw`(?:\+\d{1,3}|0\d{1,4})(?:[\s.\-]\(?\d{1,8}\)?){1,5}`;

const STATES = `(?:A[KLRZ]|C[AOT]|D[CE]|FL|GA|HI|I[ADLN]|K[SY]|LA|M[ADEINOST]|N[CDEHJMVY]|O[HKR]|P[AR]|RI|S[CD]|T[NX]|UT|V[AIT]|W[AIVY])`;
const STATE_NAMES =
  "(?:Alabama|Alaska|Arizona|Arkansas|California|Colorado|Connecticut|Delaware|Florida|Georgia|Hawaii|Idaho|Illinois|Indiana|Iowa|Kansas|Kentucky|Louisiana|Maine|Maryland|Massachusetts|Michigan|Minnesota|Mississippi|Missouri|Montana|Nebraska|Nevada|New Hampshire|New Jersey|New Mexico|New York|North Carolina|North Dakota|Ohio|Oklahoma|Oregon|Pennsylvania|Rhode Island|South Carolina|South Dakota|Tennessee|Texas|Utah|Vermont|Virginia|Washington|West Virginia|Wisconsin|Wyoming)";
/** Countries a postal address may end with: not a subdivision smaller than a state. */
const COUNTRIES =
  "(?:USA|United States|Canada|Mexico|México|Brazil|Brasil|Netherlands|Germany|Deutschland|France|Spain|España|Portugal|Italy|Ireland|United Kingdom|UK|England|Scotland|Wales|India|Philippines|Japan|China|Korea|Vietnam|Nigeria|Ghana|Kenya|South Africa|Australia|New Zealand|Colombia|Peru|Chile|Argentina|Cuba|Dominican Republic|Haiti|Jamaica|Honduras|Guatemala|El Salvador|Nicaragua|Venezuela|Ecuador|Poland|Ukraine|Russia|Turkey|Egypt|Pakistan|Bangladesh|Nepal|Thailand|Indonesia|Malaysia|Singapore)";
/** A state before a value: "TX 04829173", "Texas plate …", "NY ZX21456T". */
const STATE_PREFIX = String.raw`(?:(?:${STATES}|${STATE_NAMES})\s{1,2})?`;

const STREET_SUFFIX = `(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Ter|Circle|Cir|Parkway|Pkwy|Highway|Hwy|Square|Sq|Trail|Trl|Plaza|Plz|Alley|Crescent|Pike|Terr|Row|Loop|Run|Pass|Path|Walk|Close|Mews|Grove|Gardens|Rise|STREET|ST|AVE|RD|BLVD|LN|DR)`;
const UNIT = String.raw`(?:,?\s{1,3}(?:Apt|Apartment|Suite|Ste|Unit|Bldg|Building|Floor|Fl|Room|Rm|Lot|Trlr|Trailer|Space|Spc|#)\.?\s{0,3}#?\s{0,2}[A-Za-z0-9\-]{1,8}(?![\w\-]))?`;
/** Between two cells of a row: a comma, a bar, a semicolon or a tab, quotes around. */
const CELL = String.raw`["']?\s{0,2}[,|;\t]\s{0,2}["']?`;
/** Between the parts of an address: a comma or spaces, or a cell boundary. */
const CELL_GAP = String.raw`(?:,?\s{1,2}|${CELL})`;
/** A word of a postal line: capitalised, a number, or one of the small words of street names. */
const POSTAL_WORD = String.raw`(?:[\p{Lu}\d#][\p{L}\p{M}\d'’.ºª°/\-]*|(?:de|del|la|las|los|des|du|do|da|dos|das|di|der|den|van|von|rue|calle|avenida|apto|apt|casa|colonia|col|izq|dcha|piso|bloco|andar|bis|y|e|n)\.?(?![\p{L}\d]))`;
const HOUSE_NUMBER = String.raw`\d{1,6}[A-Za-z]?(?:-\d{1,4})?(?: 1\/2)?`;

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
  /** A match that is no such value after all, given where its label starts (`at`) and its value. */
  veto?: (text: string, at: number, value: string) => boolean;
}

/**
 * A value in groups whose first group is a lower-case word: "for 2024 2025" after "account" is
 * no account (the labels match in any case, so `LETTERS_GROUPS`'s capitals do too).
 */
const wordBeforeGroups = (value: string) => /^[a-z]+ /.test(value);

const labelledFamilies: readonly LabelledFamily[] = [
  {
    kind: "ssn",
    label: String.raw`(?:SSN|SS#|SS|SSA|social(?:${_}security)?(?:${NO})?|soc\.?(?:${_}sec\.?)?(?:${NO})?)${SEP}`,
    value: String.raw`(?:\d{3}\s{0,2}[\s.\-–—/]?\s{0,2}\d{2}\s{0,2}[\s.\-–—/]?\s{0,2}\d{4}|\d{2}-\d{3}-\d{4})(?!\d)`,
  },
  {
    kind: "mrn",
    label: String.raw`(?:MRNs?|MR#|MR${_}no\.?|medical${_}record(?:${NO})?|med\.?${_}rec\.?(?:${NO})?|record${NO}|chart(?:${NO})?|patient${NO}|pt\.?${NO}|EHR${NO}|EMR${NO}|hospital${NO}|hosp\.?${NO}|unit${_}number|encounter${NO}|FIN|CSN|ICN|PID|EPI|NHS${NO}|UR(?:${NO}|(?=\s{1,2}\d{6,9}(?!\d)))|expediente|prontu[aá]rio|historia${_}cl[ií]nica|patientennummer|patienten${_}id|pat(?:ienten)?\.?-?nr\.?|fallnummer|(?:num[ée]ro${_}(?:de${_})?)?dossier|n[°º]${_}(?:de${_}|do${_}|du${_})?(?:dossier|paciente|patient)|(?:id|n[uú]mero)${_}(?:del${_}|de${_}|do${_})?paciente|numero${_}ng${_}chart)${SEP}`,
    // An NHS number is printed 3-3-4: "943 476 5919"; OCR and forms group others by thousands: "4 417 220";
    // letters before groups of digits: "PN 2209 4471"; a year's register and its number: "2024/00817";
    // groups joined by a dash a word processor made long: "88–01–4472".
    value: String.raw`(?:\d{3}[ \-]\d{3}[ \-]\d{4}(?![\w\-])|\d{2,4}\/\d{3,8}(?![\w\-/])|\d{2,4}(?:[–—]\d{2,6}){1,3}(?![\w\-–—])|\d{1,3}(?:\.\d{3}){2,3}(?![\w\-.])|\d{1,3}(?: \d{3}){1,3}(?![\w\-])|${LETTERS_GROUPS}|${ID})`,
    // "pid=2291" in a log is a process (HL7's PID is written in capitals), unless no process can
    // have its number (Linux's largest is 4194304); "CKD-EPI" is an equation.
    veto: (text, at, value) =>
      (text.startsWith("pid=", at) && /^\d{1,7}$/.test(value) && Number(value) <= 4_194_304) ||
      text.charCodeAt(at - 1) === 45 ||
      wordBeforeGroups(value),
  },
  {
    // A key that names a person, with a number for its value: "patient=4400218", {"pt": "9920447"},
    // "rider=PT-44102", "pat_ref=77830012", "x_pt_ref": "A-31190", "subj=SUBJ-0412". The value is
    // the person's number in that system.
    kind: "mrn",
    label: String.raw`(?:(?:patient|pat|pt|rider|resident|client|enrollee)(?:[_\-]?(?:ref|id|no|num|nbr|view|key|uid))?|subj(?:ect[_\-]?(?:id|ref|no))?)["']?\s{0,2}[=:]\s{0,2}["']?`,
    value: String.raw`(?=(?:[A-Za-z\-]{0,10}\d){4})${ID}`,
  },
  {
    kind: "dob",
    label: String.raw`(?:DOB|D\.O\.B\.?|YOB|date${_}of${_}birth|birth${_}date|birth${_}year|year${_}of${_}birth|birthday|b-?day|born(?:\s{1,2}(?:on|in))?|(?:fecha${_}de${_})?nacimiento|(?:data${_}de${_})?nascimento|date${_}de${_}naissance|n[ée]e?${_}le|geburtsdatum|geb\.)${SEP}`,
    value: DOB_VALUE,
  },
  {
    // Dates of events in a person's care: admission, discharge, service, visit, surgery, death; a
    // month and a day without a year too ("admitDate": "03/04", "visit 3/12"; not a fraction, "3/4 of",
    // nor a chat line's bracketed stamp, "[10/07 9:14]").
    kind: "date",
    label: String.raw`(?:admit(?:ted)?|admission|discharge(?:d)?|disch|d\/c|service|visit|appt|appointment|surgery|procedure|death|DOD|DOS|encounter|seen)${_}(?:date|dt|on)?${SEP}`,
    value: String.raw`(?:(?<!\[)(?:0?[1-9]|1[0-2])[/\-](?:0?[1-9]|[12]\d|3[01])(?![\w/\-]|[.,]\d|\s{0,2}(?:of|days?|doses?|tabs?|tablets?|cups?|pills?|times?|hours?|hrs?)\b)|${[...MONTH_FIRST_DATES, ...DAY_FIRST_DATES].join("|")}|\d{1,2}[/.\-]\d{1,2}[/.\-](?:\d{4}|\d{2})(?!\d)|\d{4}[/.\-]\d{1,2}[/.\-]\d{1,2}(?:T[\d:.]{5,12}(?:Z|[+\-]\d{2}:?\d{2})?)?(?![\d\w])|${YYYYMMDD}(?!\d))`,
  },
  {
    kind: "fax",
    label: String.raw`fax(?:ed)?(?:${NO}|\s{1,2}line|\s{1,2}(?:do|del|du|de)\s{1,2}[A-Za-zÀ-ÿ]{3,20})?${SEP}(?:(?:to|at)\s{1,3})?`,
    value: String.raw`(?:${US_PHONE}|${INTL_PHONE}|\(\d{2,3}\)\s?\d{4,5}[\s.\-]?\d{4})(?!\d)`,
  },
  {
    kind: "phone",
    label: String.raw`(?:phone|tel|telephone|cell|mobile|call|callback|call${_}back|text|txt|ph|contact|reach|dial|whatsapp|landline|telefon|tel[eé]fono|telefone|t[eé]l[eé]phone|t[eé]l|handy|m[oó]vil|celular|portable|mobil(?:nummer)?|(?:rappelez|appelez)-moi\s{1,2}au|ll[aá]me(?:me)?\s{1,2}al|(?:ligue(?:-me)?|ligar)\s{1,2}(?:para|no))(?:${NO})?${SEP}(?:(?:me|them|him|her|us)\s{1,3})?(?:(?:on|at)\s{1,3})?`,
    // Also as other countries print numbers: "(21) 3555-0144", "612 55 01 87", "138 0013 8000".
    value: String.raw`(?:${US_PHONE}|${INTL_PHONE}|\(\d{2,3}\)\s?\d{4,5}[\s.\-]?\d{4}|\d{3}(?:[\s.]\d{2}){3}|1\d{2}\s\d{4}\s\d{4}|\d{3}[\s.\-]\d{4}|\d{7})(?![\w\-])`,
  },
  {
    // "at 555-0142": after a bare "at", only what is shaped like a phone number.
    kind: "phone",
    label: String.raw`at\s{1,2}`,
    value: String.raw`(?:\(\d{3}\)\s?\d{3}[\s.\-]\d{4}|\d{3}[.\-]\d{3}[.\-]\d{4}|\d{3}-\d{4})${EXTENSION}(?![\w\-])`,
  },
  {
    kind: "member_id",
    label: `(?:member${NO}|subscriber(?:${NO})?|policy${_}holder(?:${NO})?|sub${NO}|policy(?:${NO})?|group(?:${NO})?|grp(?:${NO})?|insurance${NO}|plan${NO}|beneficiary(?:${NO})?|medicaid(?:${NO})?|medicare(?:${NO})?|medi-?cal(?:${NO})?|MBI|HICN|BIC|CIN|OHIP|(?:sponsor${_})?benefits${NO}|health${_}plan${NO}|ins.?${NO}|(?:BCBS(?:-[A-Z]{2})?|UHC|humana|aetna|cigna|anthem|molina|ambetter|tricare|philhealth)${NO}|(?:n[uú]mero${_}de${_})?afiliad[oa]|carteirinha|carn[eé]t?|p[oó]liza|(?:num[ée]ro${_}d['’]|n[°º]${_}d['’])?adh[ée]rent|contrat|versichertennummer|versicherungsnummer)(?:${_}recipient(?:${NO})?)?${SEP}${STATE_PREFIX}`,
    value: `(?:${GROUPED_ID}|${ID})`,
  },
  {
    // "Aetna member 101948273", "member YBK 20931847", "member 8XW77120094": a bare "member"
    // only before a long number, or letters and digits with five digits in a row.
    kind: "member_id",
    label: String.raw`member\s{1,2}`,
    value: String.raw`(?:(?:[A-Z]{2,4}\s?)?\d{6,14}(?:[\s\-]\d{1,3})?|(?=[A-Z0-9]{0,15}\d{5})(?=[A-Z0-9]{0,15}[A-Z])[A-Z0-9]{8,16})(?![\w\-])`,
  },
  {
    // "member: xeh44120987": "member" as a label, with its colon.
    kind: "member_id",
    label: String.raw`member\s{0,2}:\s{0,2}`,
    value: ID,
  },
  {
    kind: "account",
    label: String.raw`(?:accounts?(?:${NO})?|acct\.?(?:${NO})?|HAR(?:${NO})?|hospital${_}account(?:${NO})?|billing${_}(?:account|id)|invoice(?:${NO})?|statement${NO}|(?:refund${_})?check${NO}|payment${_}ref(?:erence)?|claims?(?:${NO})?|routing${_}(?:number|no\.?|#)|IBAN|(?:credit${_})?card(?:${NO})?|amex|visa|mastercard|discover|factura|fatura|boleto|recibo|conta|compte(?:${_}garant)?|cuenta|konto|rx${NO}|accession${NO}|(?:prior${_})?auth(?:orization)?${_}(?:ref(?:erence)?|number|no\.?|#|id)|PA#)${SEP}`,
    value: String.raw`(?:\d{4}[\s\-]\d{6}[\s\-]\d{5}|\d{4}(?:[\s\-]\d{4}){2,3}|\d{4}[ \-]\d{5}[ \-]\d(?![\w\-])|${IBAN}|${DIGIT_GROUPS}|${LETTERS_GROUPS}|${ID})`,
    veto: (_text, _at, value) => wordBeforeGroups(value),
  },
  {
    // "card ending 4417": the last digits of a card.
    kind: "account",
    label: String.raw`card${_}ending(?:${_}in)?\s{1,2}`,
    value: String.raw`\d{4}(?:[ \-]\d{4}){1,3}(?![\w\-])|\d{4,9}(?![\w\-])`,
  },
  {
    kind: "license",
    label: String.raw`(?:(?:driver['’]?s?${_})?licen[cs]e(?:${NO})?|lic\.?(?:${NO})?|DLN|DL(?:${NO})?|certificate${NO}|cert${NO}|certification(?:${NO})?|passport(?:${NO})?|DEA(?:${NO})?|state${_}ID(?:${NO})?|(?:GMC|NMC|AHPRA|PRC)(?:${NO})?|c[ée]dula(?:${_}profesional)?|registration(?:${NO})?)${SEP}${STATE_PREFIX}`,
    // Printed in groups as on the card: "487 213 905", "B 314 725 880 162", "W425-781-64-310-0";
    // with a board's dot: "095.183377".
    value: String.raw`(?:\d{3}\.\d{5,9}(?![\w\-.])|[A-Z]?\s?\d{2,5}(?:[ \-]\d{2,5}){1,4}(?:-\d)?(?![\w\-])|[A-Z]{1,4}\s\d{4,9}(?![\w\-])|[A-Z]{2,5}\.\d{4,9}(?![\w\-.])|${ID})`,
  },
  {
    kind: "device_id",
    label: String.raw`(?:serials?(?:${NO})?|seriennummer|num[ée]ro${_}de${_}s[ée]rie|n[uú]mero${_}de${_}serie|S\/?N|SN#?|device(?:${NO})?|device${_}serial|transmitter(?:${NO})?|UDI|IMEI|MAC(?:${_}address)?|EPC|RFID${_}tag|android${_}id|dev(?=\s{0,2}[=:])|(?:tracker|sensor|pump|meter|monitor|glucometer|inhaler|gateway|tablet|hub|watch|cuff|implant|pacemaker|defibrillator|CGM|hearing${_}aid)${_}(?:ids?|serials?|sn|number|no\.?|#))${SEP}`,
    value: String.raw`(?:\d{2}[\s\-]\d{6}[\s\-]\d{6}[\s\-]?\d{1,2}(?![\w\-])|[A-Z]\s\d{5,12}(?![\w\-])|${DIGIT_GROUPS}|${ID})`,
  },
  {
    kind: "vehicle",
    label: `(?:VIN|vehicle${_}id(?:entification${_}number)?|vehicle${_}(?:number|no\\.?)|licen[cs]e${_}plate|plate(?:${NO})?|placas?(?:\\s{1,2}mercosul)?|plaka(?:${_}ng${_}sasakyan)?|(?:plaque${_}d['’])?immatriculation|bi[eể]n${_}s[oố](?:${_}xe)?|kennzeichen|kenteken|matr[ií]cula|tag|reg(?:istration)?|car${_}(?:number|no\\.?|reg(?:istration)?))(?![a-z])${SEP}${STATE_PREFIX}`,
    value: String.raw`(?:[A-Z]{2}[\s\-]?\d{1,2}[\s\-]?(?:[A-Z]{1,3}[\s\-]?){1,2}\d{1,4}(?![\w\-])|(?=[A-Z0-9\s\-]{0,14}\d)[A-Z0-9]{1,4}(?:[\s\-][A-Z0-9]{1,5}){1,2}(?![\w\-])|${ID})`,
    // A plate has no dot: "prod tag release-0.9.4" is a release, "tag v2.4.0" a version.
    // Nor is a number alone: "DICOM tag (0010,0020)".
    veto: (text, at, value) => {
      const end = text.indexOf(value, at) + value.length;
      return (
        value.includes(".") ||
        /^\d+$/.test(value) ||
        (/(?:^|\s)v\d+$/i.test(value) && /^\.\d/.test(text.slice(end, end + 2)))
      );
    },
  },
  {
    kind: "zip",
    label: `(?:zip(?:${_}code|[59])?|zipcode|postal${_}code|post${_}code|CEP)${SEP}`,
    // Brazil's CEP is 5-3: "01304-001".
    value: String.raw`(?:\d{5}(?:-\d{4})?|\d{9}|\d(?: \d){4}|\d{5}-\d{3})(?![\w\-])`,
  },
  {
    // Safe Harbor: ages over 89 are identifying.
    kind: "age",
    label: `(?:age[ds]?|aged)(?:${_}(?:in${_})?(?:years?|yrs?))?${SEP}`,
    value: String.raw`(?:9\d|1[0-2]\d)(?!\d|\s{0,2}%)`,
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

/** A capital after a small letter, where a camel-case key's next word starts ("patientMrn", "homeZip"). */
function isCamelStart(text: string, at: number): boolean {
  const code = text.charCodeAt(at);
  const before = text.charCodeAt(at - 1);
  return code >= 65 && code <= 90 && before >= 97 && before <= 122;
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
      const start = end - value.length;
      // A column of a CSV header ("npi,license_no" and a row below) labels no value of its own:
      // the row's first cell is another column's.
      if (text.charCodeAt(at - 1) === 44 && text.slice(at, start).includes("\n")) return null;
      if (family.veto?.(text, at, value) === true) return null;
      return { kind: family.kind, start, end };
    }
  }
  return null;
}

/**
 * Tries the word starts just before the token holding the digit run at `digit`, nearest first,
 * and the words of a camel-case key ("patientMrn=", "homeZip:").
 * `tried` keeps what each word start gave: the digit runs of a date or a phone number look back
 * over the same words, and the answer at a word start does not depend on the run.
 */
function labelledBefore(
  text: string,
  digit: number,
  tried: Map<number, IdentifierSpan | null>,
  found: readonly Claim[],
): IdentifierSpan | null {
  let token = digit;
  while (token > 0 && isValueChar(text.charCodeAt(token - 1))) token--;
  const reach = Math.max(0, token - LABEL_REACH);
  for (let at = token - 1; at >= reach; at--) {
    if (!isLetter(text.charCodeAt(at)) || (at > 0 && isLetter(text.charCodeAt(at - 1)) && !isCamelStart(text, at)))
      continue;
    let span = tried.get(at);
    if (span === undefined) {
      span = labelledAt(text, at);
      tried.set(at, span);
    }
    // Only a value that holds this digit run is its value: a label further back whose value ends
    // before it ("dl0-0 DOB: … 0") belongs to another run, and taking it here would make a second
    // redaction of the output find what the first did not.
    // A label inside an identifier another detector took ("a@a.mbi build 20": the "mbi" of an
    // email) labels nothing; inside a kept name ("Texas Medicaid") it still labels.
    if (span !== null && span.start <= digit && digit < span.end && !insideIdentifier(found, at)) return span;
  }
  return null;
}

function insideIdentifier(found: readonly Claim[], at: number): boolean {
  for (let i = 0; i < found.length; i++) {
    const claim = found[i] as Claim;
    if (claim.kind !== KEEP && claim.start <= at && at < claim.end) return true;
  }
  return false;
}

function collectLabelled(text: string, found: Claim[]): void {
  const tried = new Map<number, IdentifierSpan | null>();
  DIGITS.lastIndex = 0;
  for (let run = DIGITS.exec(text); run !== null; run = DIGITS.exec(text)) {
    const span = labelledBefore(text, run.index, tried, found);
    if (span === null || overlaps(found, span.start, span.end)) continue;
    found.push(span);
    DIGITS.lastIndex = Math.max(DIGITS.lastIndex, span.end);
  }
}

// ---------------------------------------------------------------------------------------------
// Vetoes and trims.

const POSTAL_STATE = new RegExp(String.raw`[\s,]{1,3}(?:${STATES}|${STATE_NAMES}|CDMX)(?![\p{L}\d])`, "u");

/** A street's name with its type as a suffix, before its house number (see the detector). */
const STREET_NAME_BEFORE =
  /\b\p{Lu}\p{Ll}{2,30}(?:stra(?:ß|ss)e|str\.|weg|gasse|platz|allee|damm|ring|gracht|straat|laan|plein|kade|dijk|singel|steeg)\s{1,2}$/u;

/** A postal line holds a number and a word, and ends on neither a comma nor a small word. */
function postalLineKeep(value: string): number {
  // A US state is kept (not an identifier), and the ZIP after it is the ZIP detectors'.
  const state = POSTAL_STATE.exec(value);
  const trimmed = (state === null ? value : value.slice(0, state.index)).replace(
    /(?:[\s,/-]+(?:de|del|la|las|los|des|du|do|da|dos|das|di|der|den|van|von|y|e|n)\.?)+$|[\s,/.-]+$/u,
    "",
  );
  // A house number or a postcode ("v2" in "address: Epic v2" is neither), and a word.
  return /(?:^|[\s,])\d+(?:[\s,\-/]|$)/.test(trimmed) && /\p{L}{2}/u.test(trimmed) ? trimmed.length : 0;
}

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
  // The builder's own machine: a local URL points at their server, not at anyone's record.
  if (/^(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\])(?::\d+)?$/i.test(authority)) return false;
  if (REGISTRY.test(authority) && rest.length === url.length) return false;
  // An issue, a pull request or a commit: work, not a person's record.
  if (CODE_HOST.test(authority)) return false;
  if (slash < 0) return false;
  const [beforeFragment = "", fragment = ""] = rest.slice(slash).split("#", 2);
  const [path = "", query = ""] = beforeFragment.split("?", 2);
  if (query.split("&").some(paramCarriesId)) return true;
  if (/\d/.test(fragment)) return true;
  const segments = path.split("/");
  // A document in storage ("…/2024/referral.pdf") is someone's record whenever its path has a number.
  if (DOCUMENT.test(path)) return /\d/.test(path);
  return segments.some((segment, i) => segmentCarriesId(segment.replace(IMAGE_TAG, ""), segments[i - 1] ?? ""));
}

/** A file a record is kept in: a scan, a letter, an export. */
const DOCUMENT = /\.(?:pdf|tiff?|jpe?g|png|heic|docx?|rtf|csv|xlsx?|hl7|xml|json|txt|dcm)$/i;

/** Code hosts and trackers. */
const CODE_HOST = /^(?:github\.com|gitlab\.com|bitbucket\.org|[\w-]+\.atlassian\.net|dev\.azure\.com)$/i;
/** Query parameters of dashboards, docs and APIs that name no one: "?version=2.1", "?orgId=1&refresh=30s". */
const NEUTRAL_PARAM =
  /^(?:version|v|api-version|orgid|refresh|from|to|page|per_page|limit|offset|sort|order|lang|locale|format|tab|view|theme|utm_\w+|var-\w+)$/i;
/** An image's tag at the end of a path: "intake:2.9.0". */
const IMAGE_TAG = /:v?\d+(?:\.\d+){1,3}(?:-[\w.]+)?$/;

/** A query parameter carries an id unless it is a neutral one with no long number in it. */
function paramCarriesId(pair: string): boolean {
  if (pair.length === 0) return false;
  const [name = "", value = ""] = pair.split("=", 2);
  return !NEUTRAL_PARAM.test(name) || /\d{5,}/.test(value);
}

/**
 * A path segment carries an id when it holds a number, except an API or standard version ("v1",
 * FHIR's "R4"), a word ending in a digit or two ("oauth2", "s3"), a year, and the month or day after one
 * ("/faxes/2026/11/").
 */
function segmentCarriesId(segment: string, previous: string): boolean {
  if (!/\d/.test(segment)) return false;
  if (/^[vr]\d+(?:\.\d+)*$/i.test(segment) || /^[A-Za-z][A-Za-z_-]*\d{1,2}$/.test(segment)) return false;
  if (/^(?:19|20)\d{2}$/.test(segment)) return false;
  return !(/^\d{1,2}$/.test(segment) && /^(?:(?:19|20)\d{2}|\d{1,2})$/.test(previous));
}

/** The prefixes of help-desk, incident and change tickets: Zendesk, ServiceNow and the like. */
const TICKET = /^(?:ZD|INC|CHG|RITM|REQ|PRB|SCTASK|TASK|TKT)-?\d/;

/**
 * The mailboxes of systems (RFC 2142's, "noreply", "bounces+…", "fax-errors"): "noreply@portal.example",
 * "support@…". A team's or a person's address ("ops@", "dev-team@", a clinic's "intake@") stays
 * redacted, as the labelling guide has every email address: a team can be one person.
 */
const ROLE_MAILBOX =
  /^(?:no-?reply|do-?not-?reply|support|helpdesk|postmaster|hostmaster|webmaster|abuse|mailer-daemon|notifications?|alerts?|[\w.-]*errors?|bounces?(?:\+[\w.-]+)?)@/i;

/** Container registries: an image reference ("ghcr.io/org/app:1.2.7") names software, not a record. */
const REGISTRY =
  /^(?:registry\.[\w.-]+|ghcr\.io|docker\.io|quay\.io|(?:[\w-]+\.)?gcr\.io|[\w-]+\.pkg\.dev|[\w-]+\.azurecr\.io|public\.ecr\.aws|[\w.-]+\.dkr\.ecr\.[\w.-]+\.amazonaws\.com)$/i;

/** Loopback and unspecified addresses identify no one; builders write them all the time. */
const LOOPBACK = new Set(["127.0.0.1", "0.0.0.0", "::1", "::"]);

/**
 * A netmask (255.255.255.0): no one's address. (The ranges kept for documentation, 192.0.2.0/24
 * and the like, are not: they are how writers make a patient's address up.)
 */
const NOBODYS_ADDRESS = /^255\.255\.(?:0|128|192|224|240|248|252|254|255)\.(?:0|128|192|224|240|248|252|254|255)$/;

function ipv4Keep(value: string): number {
  if (LOOPBACK.has(value) || NOBODYS_ADDRESS.test(value)) return 0;
  return value.split(".").every((octet) => Number(octet) <= 255) ? value.length : 0;
}

/** "a::b" could be code; an address has a digit or at least three groups. */
function ipv6Keep(value: string): number {
  if (LOOPBACK.has(value)) return 0;
  const colons = value.split(":").length - 1;
  return colons >= 2 && (/\d/.test(value) || colons >= 3) ? value.length : 0;
}

/** Whether a run of digits ends in a right Luhn check digit (cards, NPIs). */
function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** A card number: 13 to 19 digits whose Luhn check digit is right. */
function luhnKeep(value: string): number {
  const digits = value.replace(/\D/g, "");
  if (digits.length < 13 || digits.length > 19) return 0;
  return luhnValid(digits) ? value.length : 0;
}

/**
 * Each state's name, postal abbreviation and the first three digits its ZIP codes use (USPS):
 * ranges and single prefixes.
 */
const ZIP_PREFIX_TABLE = `
Alabama, AL, 350-369
Alaska, AK, 995-999
Arizona, AZ, 850-865
Arkansas, AR, 716-729
California, CA, 900-961
Colorado, CO, 800-816
Connecticut, CT, 060-069
Delaware, DE, 197-199
District of Columbia, DC, 200-205 569
Florida, FL, 320-349
Georgia, GA, 300-319 398-399
Hawaii, HI, 967-968
Idaho, ID, 832-838
Illinois, IL, 600-629
Indiana, IN, 460-479
Iowa, IA, 500-528
Kansas, KS, 660-679
Kentucky, KY, 400-427
Louisiana, LA, 700-714
Maine, ME, 039-049
Maryland, MD, 206-219
Massachusetts, MA, 010-027 055
Michigan, MI, 480-499
Minnesota, MN, 550-567
Mississippi, MS, 386-397
Missouri, MO, 630-658
Montana, MT, 590-599
Nebraska, NE, 680-693
Nevada, NV, 889-898
New Hampshire, NH, 030-038
New Jersey, NJ, 070-089
New Mexico, NM, 870-884
New York, NY, 005 063 100-149
North Carolina, NC, 270-289
North Dakota, ND, 580-588
Ohio, OH, 430-459
Oklahoma, OK, 730-749
Oregon, OR, 970-979
Pennsylvania, PA, 150-196
Rhode Island, RI, 028-029
South Carolina, SC, 290-299
South Dakota, SD, 570-577
Tennessee, TN, 370-385
Texas, TX, 750-799 885
Utah, UT, 840-847
Vermont, VT, 050-059
Virginia, VA, 201 220-246
Washington, WA, 980-994
West Virginia, WV, 247-268
Wisconsin, WI, 530-549
Wyoming, WY, 820-831
`;
const ZIP_PREFIXES = new Map<string, Array<[number, number]>>();
/** State names, lower-cased, to their postal abbreviations. */
const STATE_CODES = new Map<string, string>();
for (const line of ZIP_PREFIX_TABLE.trim().split("\n")) {
  const [name = "", code = "", prefixes = ""] = line.split(", ");
  STATE_CODES.set(name.toLowerCase(), code);
  ZIP_PREFIXES.set(
    code,
    prefixes.split(" ").map((range) => {
      const [low = "", high = low] = range.split("-");
      return [Number(low), Number(high)];
    }),
  );
}

/** "California 99457 remote monitoring": a state, not after a comma, and five digits it never uses. */
function notThatStatesZip(text: string, match: RegExpExecArray): boolean {
  const before = STATE_BEFORE.exec(text.slice(Math.max(0, match.index - 20), match.index));
  const state = before?.[1] ?? "";
  const stateAt = match.index - (before?.[0].length ?? 0);
  if (/,\s{0,2}$/.test(text.slice(Math.max(0, stateAt - 3), stateAt))) return false;
  // "in 10027", "or 33101": the pattern ignores case, so a word like these reads as a state
  // abbreviation and the number is still taken for a ZIP (where people are, it usually is).
  if (state.length === 2 && state !== state.toUpperCase()) return false;
  return zipOfState(state, match[0]) === false;
}

/**
 * Whether one of the ZIP codes of `state` (a code like "TX" in any case, or a name) starts like
 * `zip`; undefined for a word that is no state.
 */
function zipOfState(state: string, zip: string): boolean | undefined {
  const code = state.length === 2 ? state.toUpperCase() : STATE_CODES.get(state.toLowerCase());
  const ranges = code === undefined ? undefined : ZIP_PREFIXES.get(code);
  if (ranges === undefined) return undefined;
  const prefix = Number(zip.slice(0, 3));
  return ranges.some(([low, high]) => prefix >= low && prefix <= high);
}
const STATE_BEFORE = new RegExp(String.raw`\b(${STATES}|${STATE_NAMES})\s{1,2}$`, "i");

/**
 * A number that a word of codes or settings stands right before, or heads the list it is in:
 * "CPT 99213", "fee schedule: 90834, 90837", `"cpt": "97110"`, "radius_m: 16093", "batch id
 * 80231", "regions 10001 through 10009". Where a text speaks of ZIPs, its other five digits are
 * still these.
 */
const CODE_LIST_BEFORE =
  /\b(?:cpts?|hcpcs|(?<!(?:zip|postal|post)[\s_-]?)codes?|fee schedule|procedures?|batch|radius\w*|meters?|units?|regions?|versions?|build|port)["']?(?:[\s,:;=()"'/&-]|\b(?:ids?|no|#|and|or|through|to)\b|\d{5}\b)*$/i;

const MEDICARE_CUE = /\b(?:medicare|mbi)\b/i;
const SERIAL_CUE =
  /(?<!\[)\b(?:serials?|s\/n|sn|imei|udi|device[ _-]?(?:ids?|serials?)|transmitter|hearing aids?|pacemaker|implant)\b(?!\])/i;

/** Whether `cue` is in `text`, asked once per text and cue however many matches ask (the last text is remembered). */
function cueIn(cue: RegExp, text: string): boolean {
  const seen = cueMemo.get(cue);
  if (seen !== undefined && seen.text === text) return seen.hit;
  const hit = cue.test(text);
  cueMemo.set(cue, { text, hit });
  return hit;
}
const cueMemo = new Map<RegExp, { text: string; hit: boolean }>();

/** Words of a patient's care, as staff write them, near a bare number that names a chart. */
const CARE_WORDS =
  /\b(?:pt|patient|chart|mrn|d\/c|dc'?d|d\/c'd|f\/u|labs?|refills?|allerg\w*|admit\w*|discharg\w*|bed|npo|consent|wristband|portal|dx|hx|s\/p|pod\d?|readmit\w*|appt|seen|huddle|surgery|pre-?op|post-?op|meds?|vitals|triage|pull|summary)\b|'s\s{1,2}(?:refill|labs?|allerg|chart|appt|meds?)/i;

/** A system's object and its id right before a number: "job id 8812004", "batch #4471920", "pid 2210034". */
const SYSTEM_ID_BEFORE =
  /\b(?:jobs?|orders?|builds?|tickets?|runs?|requests?|invoices?|batch(?:es)?|tasks?|traces?|process(?:es)?|pid|issues?|incidents?|inc|events?|messages?|threads?|sessions?|queues?)\s{0,2}(?:id|number|no\.?|#|ref)?\s{0,2}[:#=]?\s{0,2}$/i;

/** Words before a token that make it a product's or a build's, not a device's own number. */
const NOT_A_SERIAL_BEFORE =
  /\b(?:model|part|p\/n|ref|lot|sku|catalog(?:ue)?|cat|firmware|fw|version|ver|build|release|order|ticket|jira|issue|pr|commit|sha|tag|image|run|job|req(?:uest)?|trace)\b[\s#:=-]{0,3}(?:no\.?|number|#)?[\s#:=]{0,3}$/i;

/** Whether the word right before `at` is a US city (a word of the place list that is no state). */
function isCityBefore(text: string, at: number): boolean {
  const word = /(\p{L}[\p{L}'’.-]{2,20}),?\s{1,2}$/u.exec(text.slice(Math.max(0, at - 26), at))?.[1];
  return word !== undefined && vocab().places.has(fold(word)) && !STATE_WORD.test(word);
}
const STATE_WORD = new RegExp(`^(?:${STATE_NAMES})$`, "i");

/** A state cell before a ZIP cell: vetoed unless the state's ZIPs start with those digits. */
function notStateCellZip(text: string, match: RegExpExecArray): boolean {
  const state = STATE_CELL_BEFORE.exec(text.slice(Math.max(0, match.index - 24), match.index))?.[1] ?? "";
  return zipOfState(state, match[0]) !== true;
}
const STATE_CELL_BEFORE = new RegExp(String.raw`(?<![\p{L}\d])(${STATES}|${STATE_NAMES}|[a-z]{2})${CELL}$`, "u");

/**
 * Ten digits that no North American number can be (an area code or exchange starting 0 or 1), in
 * a text that mentions NPIs: an NPI, valid or not ("isValidNpi('1234567890')" tests a bad one).
 */
function isNpiNotPhone(value: string, text: string): boolean {
  return value.length === 10 && !/^[2-9]\d\d[2-9]/.test(value) && /npi/i.test(text);
}

/** Ten digits with an NPI's check digit (Luhn over "80840" and the digits), in a text about NPIs: a provider's number, not a record's. */
function isNpi(value: string, text: string): boolean {
  return value.length === 10 && /npi/i.test(text) && luhnValid(`80840${value}`);
}

function intlPhoneKeep(value: string): number {
  const digits = value.replace(/\s{0,2}(?:x|ext\.?|extension)\s{0,2}\d{1,6}$/i, "").replace(/\D/g, "").length;
  return digits >= 8 && digits <= 15 ? value.length : 0;
}

// ---------------------------------------------------------------------------------------------
// Pattern detectors, in priority order after the labelled values.

interface Facts {
  digit: boolean;
  /** How many digits the text holds, and its longest run of them: a pattern needing more is not run (`digit-floor.ts`). */
  digits: DigitFloor;
  /** Which literals the text may hold: a pattern needing words it cannot hold is not run (`literal-floor.ts`). */
  grams: TextGrams;
  at: boolean;
  web: boolean;
  /** A placeholder of an earlier pass is in the text. */
  placeholder: boolean;
  /** " dot " and " at ": worth looking for a spelled-out email address. */
  spelled: boolean;
  /** A key that can hold a city or a street: "city:", "street=". */
  addressKey: boolean;
  /** "::" or many colons: worth looking for IPv6. */
  ipv6: boolean;
  /** Five colons or dashes: worth looking for a MAC address. */
  mac: boolean;
  /** Words that can introduce digits read out: "social is six one two…". */
  ssnWord: boolean;
  /** An English month name or abbreviation, any case. */
  monthWord: boolean;
  /** Seven number words, any case ("two one two …"): the fewest a phone number read out has. */
  readDigits: boolean;
  /** A four or a five in Spanish, Portuguese, French or German: see `DIGIT_WORD_ABROAD`. */
  readDigitsAbroad: boolean;
  /** "noventa", "quatre-vingt"… and "años", "ans"…: an age over 89 in words in another language has both. */
  ageWordAbroad: boolean;
  /** "A1c", any case. */
  a1c: boolean;
  /** A colon: a label can precede a value or a list. */
  colon: boolean;
  /** Four masking characters in a row ("xxxx", "****", "••••"): a card's number may be masked. */
  masked: boolean;
  /** "Rx", any case: a pharmacy card's routing numbers may be labelled. */
  rx: boolean;
  /** A clock's time ("14:02:11"), which logs print with their date. */
  clock: boolean;
  /** "called" or "named": a bot's persona may be named. */
  named: boolean;
  /** "bot", "assistant", "persona", "agent", "avatar" or "voice", any case: a bot's persona may be named. */
  bot: boolean;
  /** "Given", "When" or "Then": Gherkin's steps. */
  gherkin: boolean;
  /** "<", "* " or "-!-": a chat log's nick or event may follow. */
  chat: boolean;
}

interface Detector {
  kind: IdentifierKind;
  /** Global; the whole match is the value unless a capture group took part (then the first one, which ends the match). */
  pattern: RegExp;
  /** Cheap facts about the text that must hold before the pattern is worth running. */
  needs: Exclude<keyof Facts, "digits" | "grams"> | "always";
  /** How many leading characters of the value to redact (0 rejects the match): trims or vetoes. */
  keep?: (value: string) => number;
  /**
   * Rejects a match its surroundings say is something else; "keep" also claims it as kept, so no
   * later detector or the name finder reads it (a system event's date: "Dec 5" is not a name).
   */
  veto?: (text: string, match: RegExpExecArray) => boolean | "keep";
  /** It reads placeholders of an earlier pass ("[ADDRESS], Boca Raton"), so later passes run it too. */
  placeholders?: true;
  /**
   * What, right before a match, belongs to its value (a pattern ending in `$`, tried on the
   * `REACH` characters before): a pattern can then start at a rare character, the rest taken after.
   */
  reach?: RegExp;
  /** The digits a match of `pattern` needs, read from it once (`digit-floor.ts`). */
  digits?: DigitFloor;
  /** Literals one of which a match of `pattern` holds, read from it once (`literal-floor.ts`); null: none known. */
  literals?: Literals | null;
}

/** How far before a match a detector's `reach` looks. */
const REACH = 200;

/**
 * Put before a leading look-behind: the engine tries a pattern at every position of the text and
 * would run the look-behind (words read backwards) at each. Tested first, a cheap look-ahead for
 * what the match must start with lets it run only where a match can start; zero-width tests at
 * one position commute, so the matches are the same (up to 9× faster on long text).
 */
const AT_DIGIT = String.raw`(?=\d)`;

function rx(source: string, flags = "g"): RegExp {
  return new RegExp(source, flags);
}

/** Detectors that run before the labelled values: their matches can contain text that looks labelled. */
const earlyDetectors: readonly Detector[] = [
  {
    kind: "url",
    needs: "web",
    pattern: rx(
      // Every form reaches a ':' or a '.' within 64 letters, digits and hyphens: only there is it tried.
      String.raw`\b(?=[a-z0-9\-]{0,63}[:.])(?:(?:https?|ftps?|wss?|s3|gs|sftp|file):\/\/${URL_CHARS}{1,2048}|(?!${EMAIL_LOCAL}{1,128}@)(?:www\.${URL_CHARS}{1,2048}|[a-z0-9](?:[a-z0-9\-]{0,62}\.){1,8}${TLD}\/${URL_CHARS}{0,2048}))`,
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
    veto: (_text, match) => (ROLE_MAILBOX.test(match[0]) ? "keep" : false),
  },
  // Network addresses are self-delimiting; "dea:000" inside one is not a DEA number.
  // Every form has a colon after at most four hex digits: checked first, the forms are tried only there.
  {
    kind: "ip",
    needs: "ipv6",
    pattern: rx(String.raw`(?=[0-9A-Fa-f]{0,4}:)(?<![\w:])(?:${IPV6})(?![\w:]|\.\d)`),
    keep: ipv6Keep,
  },
  {
    kind: "ip",
    needs: "digit",
    // Not a CIDR block ("10.0.0.0/8"): a range of a network, nobody's address.
    // Nor a package's four-part version ("fax-sdk==4.12.0.3").
    pattern: rx(String.raw`(?<![\w.]|[=<>~]=)\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}(?!\.?\d)(?!\w)(?!\/\d{1,2}(?!\d))`),
    keep: ipv4Keep,
  },
];

/** " dot ", "[dot]", " (at) ": a word standing for a symbol in a spelled-out email address. */
const SPOKEN = (words: string) => String.raw`(?:\s(?:${words})\s|\s?\[(?:${words})\]\s?|\s?\((?:${words})\)\s?)`;
const DIGIT_WORD = "(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)";
/** The digits in Spanish, Portuguese, French and German, as a caller reads a number out. */
const DIGIT_WORD_ABROAD =
  "(?:cero|uno|una|dos|tres|cuatro|cinco|seis|siete|ocho|nueve|zéro|zero|un|deux|trois|quatre|cinq|six|sept|huit|neuf|null|eins|zwei|zwo|drei|vier|fünf|sechs|sieben|acht|neun|um|duas|três|quatro|sete|oito|nove)";
/** A day of the month in words: "third", "twenty-first". */
const ORDINAL_WORD =
  "(?:(?:twenty|thirty)[\\s\\-])?(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|thirtieth)";
/** A year read out: "nineteen sixty-one", "nineteen oh five", "two thousand twelve". */
const YEAR_WORDS =
  "(?:nineteen|twenty|two\\s{1,2}thousand)(?:[\\s\\-](?:oh[\\s\\-])?(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[\\s\\-](?:one|two|three|four|five|six|seven|eight|nine))?)?";
/** Letters of a Medicare Beneficiary Identifier: A–Z without S, L, O, I, B and Z. */
const MBI_LETTER = "[AC-HJKMNP-RT-Y]";

/** What stands before a day of the month said on its own: "on the", "Thursday the", "yesterday the". */
/** A month and a day, slashed: "12/02", "2/7". */
const MONTH_DAY = String.raw`(?:0?[1-9]|1[0-2])\/(?:0?[1-9]|[12]\d|3[01])`;
/** What joins the items of a list: ", ", ", and ", " and ". */
const LIST_JOIN = String.raw`(?:,\s{1,2}(?:and\s{1,2})?|\s{1,2}and\s{1,2})`;
const DAY_OF_MONTH_LEAD = String.raw`(?:\b(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun),?\s{1,2}(?:the\s{1,2})?|\b(?:yesterday|today|tomorrow),?\s{1,2}the\s{1,2}|\b(?:on|from|to|until|till|since|by|before|after|of|admitted|discharged|seen|scheduled|rescheduled|reschedule|moved|booked|rebooked|cancell?ed|canceled|postponed|confirmed)\s{1,2}the\s{1,2})`;

/** A schedule's day, not someone's: "billing runs on the 1st", "on the 1st of each month". */
function isScheduleDay(text: string, match: RegExpExecArray): boolean {
  const end = match.index + match[0].length;
  return (
    /\b(?:every|each|monthly|runs?|cron|recurring)\b[^.\n]{0,40}$/i.test(
      text.slice(Math.max(0, match.index - 60), match.index),
    ) ||
    /^[^.\n]{0,30}?\b(?:of\s{1,2}(?:each|every)\s{1,2}month|monthly|every\s{1,2}month)\b/i.test(
      text.slice(end, end + 50),
    )
  );
}

const detectors: readonly Detector[] = [
  // A ZIP code someone moved to or from: "she moved to 60614 last month", "moved to 94621 from 94601".
  {
    kind: "zip",
    needs: "digit",
    pattern: rx(
      String.raw`${AT_DIGIT}(?<=\b(?:moved|moving|relocated|relocating)\s{1,2}(?:back\s{1,2})?(?:to|from|in(?:to)?)\s{1,2}(?:zip(?:\s{1,2}code)?\s{1,2})?(?:\d{5}\s{1,2}(?:from|to)\s{1,2})?)\d{5}(?:-\d{4})?(?![\w\-.]|\s{0,2}(?:%|ms|mg|rows?|records?|patients?|items?|times?|users?|members?)\b)`,
      "gi",
    ),
  },
  // A date in the name of a patient's file: "88120455_20260219_referral.pdf", "kowalski_20250211_admit.tif",
  // "EOB_CLM0091822771_2025-05-19.pdf" (a document's, an image's, a recording's or a data file's,
  // not a migration's or an archive's: "20250301_down.sql" stays).
  {
    kind: "date",
    needs: "digit",
    pattern: rx(
      String.raw`${AT_DIGIT}(?<=(?:^|[\s"'(/\\=:,])(?:[\w\-[\]]{0,60}[_\-])?)(?:(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])|(?:19|20)\d{2}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01]))(?=(?:[_\-][\w\-[\]]{0,60})?\.(?:pdf|tiff?|png|jpe?g|gif|heic|wav|mp3|m4a|mp4|dcm|hl7|x12|edi|csv|txt|docx?|xlsx?|rtf|xml)\b)`,
      "gi",
    ),
  },
  // A patient named by their number: "patient P8821 checked in", "Patient 88213 (old chart)": five
  // digits or more, or a letter and four (not a dose, a count or a year after "patient").
  {
    kind: "mrn",
    needs: "digit",
    pattern: rx(
      String.raw`\b(?:patient|pt)\s{1,2}(?:#\s?)?([A-Z]{1,3}-?\d{4,10}|\d{5,10})(?![\w\-.]|\s{0,2}(?:%|mg|ml|kg|lbs?|mm|cm|units?|minutes?|mins?|hours?|days?|weeks?|months?|years?|yrs?|rows?|records?|patients?|visits?|calls?|messages?|times?)\b)`,
      "gi",
    ),
  },
  // A patient's record fetched by its id in code: `patient(id: "8812003")`, `getPatient("P-44120")`,
  // `findMemberById('W20931')`: two digits or more, quoted or bare, as the call's first argument.
  {
    kind: "mrn",
    needs: "digit",
    pattern: rx(
      String.raw`(?:[Pp]atient|PATIENT|[Mm]ember|[Cc]hart|MRN|Mrn)(?:By[A-Z]\w{1,8})?\(\s{0,2}(?:(?:id|mrn|patientId|memberId)\s{0,2}[:=]\s{0,2})?["'\x60]?((?=[\w-]{0,24}\d[\w-]{0,24}\d)[A-Za-z0-9][\w-]{1,30})(?=["'\x60]?\s{0,2}[,)])`,
    ),
  },
  // A Health Insurance Claim Number: an SSN with a letter (and maybe a digit) after it, "318-52-4406A".
  {
    kind: "member_id",
    needs: "digit",
    pattern: rx(String.raw`(?<![\w\-])\d{3}-?\d{2}-?\d{4}[A-Z]\d?(?![\w\-])`),
  },
  // 3-2-4 digits with one separator used twice: "123-45-6789", "608.21.4475", "229/47/8810", "461 - 83 - 2207".
  {
    kind: "ssn",
    needs: "digit",
    pattern: rx(
      String.raw`(?<![\w\-–—./])\d{3}(?:-\d{2}-|\s\d{2}\s|\.\d{2}\.|\/\d{2}\/|–\d{2}–|—\d{2}—|\s[-–—]\s\d{2}\s[-–—]\s)\d{4}(?![\w\-–—/]|\.\d)|(?<![\dA-Za-z])\d{3}_\d{2}_\d{4}(?![\dA-Za-z])`,
    ),
  },
  // A SIM card's ICCID (19 or 20 digits from 89): a device's, as gateway logs print it.
  {
    kind: "device_id",
    needs: "digit",
    pattern: rx(String.raw`(?<![\w\-.])89\d{17,18}(?![\w\-.])`),
  },
  // A clinician's licence after its credential or register: "RN.4471920", "ARRT 0558120",
  // "PTCB 44712093", "CRM-SP 148220" (not MD, PA or DO, which are states and a word too).
  {
    kind: "license",
    needs: "digit",
    pattern: rx(
      String.raw`\b(?:RN|LPN|LVN|APRN|CRNA|RPh|PTCB|ARRT|NCCPA|CRM(?:-[A-Z]{2})?|COREN(?:-[A-Z]{2})?|CRF|CREFITO(?:-\d{1,2})?|PRC)[\s.#:\-]{1,3}(?:no\.?\s{0,2}|#\s?)?(\d{5,10})(?![\w\-.]|\s{0,2}(?:%|mg|rows?|patients?|hours?|minutes?))`,
    ),
  },
  // Medicare Beneficiary Identifier: 1EG4-TE5-MK73, with or without its dashes or spaces.
  {
    kind: "member_id",
    needs: "digit",
    pattern: rx(
      String.raw`(?<![\w\-])[1-9]${MBI_LETTER}[${MBI_LETTER.slice(1, -1)}0-9]\d[\s\-]?${MBI_LETTER}[${MBI_LETTER.slice(1, -1)}0-9]\d[\s\-]?${MBI_LETTER}{2}\d{2}(?![\w\-])`,
    ),
  },
  // GS1 unique device identifiers: (01) and fourteen digits, then application identifiers.
  {
    kind: "device_id",
    needs: "digit",
    pattern: rx(String.raw`\(01\)\d{14}(?:\(\d{2}\)[A-Za-z0-9]{1,20}){0,5}`),
  },
  // The same element string as a scanner gives it, without parentheses: "01" and fourteen digits,
  // an expiry or production date ("17" or "11" and six digits), then a lot or serial ("10", "21").
  {
    kind: "device_id",
    needs: "digit",
    pattern: rx(String.raw`(?<![\w\-])01\d{14}(?:1[17]\d{6})?(?:10|21)[A-Za-z0-9]{1,20}(?![\w\-])`),
  },
  // An IMEI printed in its groups ("35-209900-176148-1", "35 209900 176148 1"), its Luhn digit right.
  {
    kind: "device_id",
    needs: "digit",
    pattern: rx(String.raw`(?<![\w\-])(?:\d{2}-\d{6}-\d{6}-\d|\d{2} \d{6} \d{6} \d)(?![\w\-]|\.\d)`),
    keep: (value) => (luhnValid(value.replace(/\D/g, "")) ? value.length : 0),
  },
  // HIBCC unique device identifiers: "+", a labeler code (a letter and three characters), the
  // product and unit of measure, then a check character; the lot or serial after "/$$" or "/$".
  {
    kind: "device_id",
    needs: "digit",
    pattern: rx(
      String.raw`(?<![\w+])\+(?=[A-Z0-9]{0,24}\d)[A-Z][A-Z0-9]{3}[A-Z0-9]{2,19}(?:\/\$\$?[A-Z0-9+]{2,40})?(?![\w/$])`,
    ),
  },
  // Letters then six or more digits ("PT88310447", "H71044382901", "RVH-204417"), or digits
  // then a letter ("77300412B"): record, member and claim numbers, whatever their label.
  {
    kind: "mrn",
    needs: "digit",
    pattern: rx(String.raw`(?<![\w\-.])(?:[A-Z]{1,4}[-_]?\d{6,14}[A-Z]?|\d{7,12}[A-Z]\d?)(?![\w\-])`),
    // Help-desk and change tickets ("ZD-558120", "INC0012345") are numbered the same way.
    veto: (_text, match) => (TICKET.test(match[0]) ? "keep" : false),
  },
  // The member's id on a pharmacy card, after its routing numbers: "RxBIN 610502 RxPCN MEDDPRIME ID 77214830900".
  {
    kind: "member_id",
    needs: "always",
    pattern: rx(
      String.raw`(?<=\b(?:RxBIN|RxPCN|RxGRP|RxGrp|BIN|PCN)\b[^\n]{0,80}?\bID\s{0,2}[:#]?\s{0,2})(?=[A-Z0-9]{0,15}\d)[A-Z0-9]{6,16}(?![\w\-])`,
    ),
  },
  // A person's login or handle after its key: user=jmcallister, "user_name": "folake.o", owner:
  // mfaleolo, login failed for user "jbarros". Not a system's account ("user=postgres") or a type
  // in a schema ("owner: string").
  {
    kind: "name",
    needs: "always",
    pattern: rx(
      String.raw`\b(?:user(?:[_\-]?name|[_\-]?id)?|login|assignee|owner|author)(?:["']?\s{0,2}[=:]\s{0,2}["'\x60]?|\s{1,2}["'\x60])(?!(?:admin|root|postgres|system|service|svc\w*|guest|anonymous|bot|api|ci|deploy\w*|test\w*|null|none|undefined|true|false|unknown|string|number|boolean|int|integer|uuid|text|varchar|date\w*|timestamp|object|array|str|bool|me|you|patient|nurse|doctor|staff|frontdesk\w*|front_desk\w*|desk\w*|kiosk\w*|station\w*|team\w*|clinic\w*|intake\w*|reception\w*|scheduler\w*)\b)(?!(?:tok|run|loop|hlth)_)([a-z][a-z0-9._\-]{2,30})(?![\w@.\-])`,
    ),
  },
  // Initials written for a person: "pt A.B. (mrn …)", "seen by Dr. L.O.", "RN on shift was K.M.", a
  // signature's "— R.K.S.". Not an abbreviation everyone writes ("U.S.", "A.M.", "M.D.", "E.R.").
  {
    kind: "name",
    needs: "always",
    pattern: rx(
      String.raw`(?:(?<=\b(?:pt|patient|Dr|Mr|Mrs|Ms|Mx|by|was|nurse|RN|NP|PA|MA|per|cc)\.?\s{1,2})|(?<=^[ \t]*[-—–~]{1,2}[ \t]?))(?!(?:U\.S|U\.K|E\.U|A\.M|P\.M|M\.D|D\.O|R\.N|N\.P|P\.A|E\.R|I\.V|P\.O|B\.I\.D|T\.I\.D|Q\.I\.D|Q\.D|D\.C|N\.Y|L\.A|S\.F|U\.N|E\.G|I\.E|A\.K\.A|N\.B|P\.S|O\.K|E\.T\.A|R\.S\.V\.P|Q\.A|A\.I|U\.I)\.)[A-Z]\.[A-Z]\.(?:[A-Z]\.)?(?![\w.])`,
      "gm",
    ),
  },
  // A person's login after "user" and a space, as logs and admins write it ("login failed for user
  // mwong", "SSO user jsalazar.md"): not a word ("user input", "user story") nor a system's account.
  {
    kind: "name",
    needs: "always",
    pattern: rx(
      String.raw`\buser\s{1,2}(?<=\b(?:for|SSO|sso|AD|ad|portal)\s{1,2}user\s{1,2})(?!(?:admin|root|postgres|system|service|svc\w*|guest|anonymous|bot|api|ci|deploy\w*|test\w*|null|none|unknown|me|you|patient|nurse|doctor|staff)\b)([a-z][a-z0-9._\-]{2,30})(?![\w@.\-])`,
    ),
    veto: (_text, match) => isWord(match[1] ?? ""),
  },
  // A person's home directory: "/home/mbellweather/Downloads", "/Users/akoh/", "C:\Users\jdoe\" (not
  // a machine's or a station's account: root, ubuntu, ec2-user, deploy, runner, dev, frontdesk…).
  {
    kind: "name",
    needs: "always",
    pattern: rx(
      String.raw`(?:\/(?:home|Users)\/|\b[A-Z]:\\Users\\)(?!(?:root|ubuntu|ec2-user|admin|administrator|deploy|app|apps|jenkins|git|gitlab-runner|runner|www-data|postgres|node|user|default|public|shared|centos|debian|vagrant|docker|azureuser|opc|circleci|travis|ci|build|builder|dev|developer|service|svc\w*|frontdesk\w*|front_desk\w*|reception\w*|kiosk\w*|station\w*|nurse\w*|lab\w*|clinic\w*|office\w*|staff\w*|me|you|username|\$USER|\$\{?USER\}?)(?=[\/\\]))([A-Za-z][A-Za-z0-9._\-]{1,30})(?=[\/\\])`,
    ),
  },
  // Two records joined into one: "merge 5502918 into 5502981" (the second is `collectSiblings`'s).
  {
    kind: "mrn",
    needs: "digit",
    pattern: rx(
      String.raw`\b(?:merg(?:e|ed|ing)|link(?:ed|ing)?|combin(?:e|ed|ing)|dedup(?:e|ed|ing)?)\s{1,2}(?:(?:chart|record|mrn|patient|pt)s?\s{1,2})?#?(\d{5,10})(?=\s{1,2}(?:into|to|with|and|&|\+)\s{1,2}#?\d{5,10}(?!\d))`,
      "gi",
    ),
  },
  // A surname in lower case after a title, as chats write one: "mrs okeke called", "Mr patel".
  // Not a common word ("mr clean"); "ms" and "dr" without a dot are units and drives too often.
  {
    kind: "name",
    needs: "always",
    pattern: rx(
      String.raw`(?<![\p{L}\d])(?:[Mm]rs?|[Mm]x|MRS?)\.?[ \t]{1,2}(?!(?:de|del|la|las|los|van|von|der|den|da|di|du|le|st|bin|ibn|al|el)[ \t])(\p{Ll}[\p{Ll}'’\-]{1,30})(?![\p{L}\d'’\-])`,
      "gu",
    ),
    veto: (_text, match) => vocab().common.has(match[1] ?? "") || vocab().commonElsewhere.has(match[1] ?? ""),
  },

  // A login after a tracker's or a log's key for who did something: "reviewer: aokafor",
  // "by=tkowalczyk", "approved_by": "m.osei". Not a system's ("updated_by=cron") nor a common
  // word without a handle's marks ("created_by: default").
  {
    kind: "name",
    needs: "always",
    pattern: rx(
      String.raw`(?:by(?<=(?:^|[^\w\-])(?:[a-z]{3,12}ed[_\-])?by)|(?<![\w\-])(?:reviewers?|reporter|approver|requester|submitter))(?:["']?\s{0,2}[=:]\s{0,2}["'\x60]?)(?!(?:admin|root|system|service|svc|cron|jobs?|scheduler|worker|automation|webhook|sync|import|migration|api|ci|bot|null|none|unknown|string|asc|desc)(?:[_\-.\d][\w.\-]*)?(?![\w.\-])|[\w.\-]*bot(?![a-z]))([a-z][a-z0-9._\-]{2,30})(?![\w@.\-])`,
    ),
    veto: (_text, match) => {
      const value = match[1] ?? "";
      return !/[._\-\d]/.test(value) && vocab().common.has(value);
    },
  },
  // A GitHub login in the lines GitHub writes: "Merge pull request #88 from okwuosa-c/fix-fax-retry",
  // "review from svetlana-p:". Not a bot, nor a branch of the same repository ("from feature/fax-ocr").
  {
    kind: "name",
    needs: "always",
    pattern: rx(
      String.raw`(?:\bMerge pull request #\d{1,7} from |\breview from )(?![\w.\-]*bot(?![a-z])|(?:feature|feat|fix|bugfix|hotfix|release|chore|main|master|develop|dev|refactor|docs|test|ci|build)\/)([A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){1,38})(?=[/:\s])`,
    ),
  },
  // A handle after the words that say who did something in a tracker or a log: "opened by
  // tomasz-k", "reporter t.ngata", "merged by jlee2". Only a handle's shape (a dot, a dash or an
  // underscore inside, or digits at the end): "approved by finance" is no one; nor a bot's.
  {
    kind: "name",
    needs: "always",
    pattern: rx(
      String.raw`(?:by(?<=\b(?:opened|closed|created|updated|edited|approved|merged|assigned|reviewed|reported|requested|submitted|raised|filed|authored)\s{1,2}by)|\b(?:reviewers?|reporter|approver|requester|submitter))\s{1,2}@?(?![\w.\-]*bot(?![a-z])|github|sha\d)([a-z][a-z0-9]*(?:[._\-][a-z0-9]+){1,2}|[a-z]{2,}\d{1,4})(?![\w@.\-])`,
    ),
  },
  // A person's handle where chats and trackers print one: "@emily.r", "<jlee> anyone know…",
  // "* rbhatt has quit", "tgonzalez joined #health-dev". Not a bot's nick, a channel's or a team's mention
  // ("@here", "@oncall-platform"), a doc tag or an at-rule ("@param", "@media"), or a domain; nor
  // right after a placeholder ("[NAME]@afl" of "Bu@afl", a fast-check counterexample to idempotence).
  {
    kind: "name",
    needs: "at",
    pattern: rx(
      String.raw`(?<![\w.@/\\\]])@(?!(?:here|channel|everyone|all|default|main|latest|next|beta|canary|stable|param|returns?|type|typedef|deprecated|see|example|throws|property|prop|override|media|import|keyframes|apply|layer|use|container|supports|font-face|ts-\w+|types|vercel|angular|babel|testing-library|storybook|tanstack|trpc|elysiajs|(?:assistant|agent|ai|claude|gpt|copilot|oncall|on-call|team|dev|ops|support|admin|bot|pharmacy|billing|security|sre|infra|platform|eng|frontdesk|front-desk|clinic|nurse|doctor|staff|user|triage|intake|scheduling|all-)[\w.\-]*)\b)([a-z][a-z0-9._\-]{1,30}[a-z0-9])(?![\w@/(\-]|\.\w)`,
    ),
    veto: (text, match) =>
      /^\s{0,2}[:=]\s{0,2}["'\d]/.test(text.slice(match.index + match[0].length, match.index + match[0].length + 6)),
  },
  {
    kind: "name",
    needs: "chat",
    pattern: rx(
      String.raw`^[ \t]{0,4}(?:\[?\d{1,2}:\d{2}(?::\d{2})?\]?[ \t]{1,2})?(?:<[@+%~&]?(?![\w.\-]*bot(?![a-z]))([a-z][\w.\-]{1,30})(?=>[ \t](?![^\n]*<\/))|(?:\*{1,3}|-!-)[ \t]{1,2}([a-z][\w.\-]{1,30})(?=[ \t](?:has[ \t](?:quit|joined|left)|joined|left|quit|is now known)))`,
      "gim",
    ),
  },
  {
    kind: "name",
    needs: "always",
    pattern: rx(String.raw`(?<![\w.@\-])([a-z][\w.\-]{1,30})(?=[ \t](?:has[ \t])?joined[ \t]#)`, "g"),
  },
  // A bare number of seven or eight digits where the text speaks of a patient's care, as staff
  // chat and tickets name a chart by its number: "can you pull 88120043", "#4471920 d/c'd", "f/u
  // on 4408821", "5590021's refill", "Bed 3 — 4410928 — NPO". Not a count, a quantity, a
  // system's number (an order's, a build's, a job's, a ticket's), a date written without
  // separators, nor a field of HL7, a query string or markup (their readers know what it is).
  {
    kind: "mrn",
    needs: "digit",
    pattern: rx(
      String.raw`${AT_DIGIT}(?<![\w\-./:$@,+|^~=<>]|\d[ ,]|[#@][\w\-]{1,20}[\-_])(?!${YYYYMMDD}(?!\d)|(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])(?:19|20)\d\d(?!\d))\d{7,8}(?![\w\-/]|[.,]\d|\s{0,2}(?:%|[kmg]?b\b|bytes|ms|rows?|records?|patients|people|users|members|messages|calls|requests|items|times|units|mg|ml|usd|dollars|minutes|seconds|hours|days|visits|claims)\b)`,
      "gi",
    ),
    veto: (text, match) => {
      const before = text.slice(Math.max(0, match.index - 80), match.index);
      const after = text.slice(match.index + match[0].length, match.index + match[0].length + 80);
      return (
        NOT_A_SERIAL_BEFORE.test(before) || SYSTEM_ID_BEFORE.test(before) || !CARE_WORDS.test(`${before} ${after}`)
      );
    },
  },
  // A record's number asked for by what is in it: "pull labs for 7720019", "the chart of 00912374";
  // not a count ("results for 120000 patients").
  {
    kind: "mrn",
    needs: "digit",
    pattern: rx(
      String.raw`${AT_DIGIT}(?<=\b(?:labs?|charts?|records?|results?|notes|meds|history|encounters?|visits?|appts?|appointments?|orders?|allergies|vitals|imaging|patient|pt)\s{1,2}(?:for|of|on)\s{1,2}(?:#\s?)?)\d{6,10}(?![\w\-/.]|\.\d|\s{1,2}(?:patients?|people|users?|members?|rows?|records?|units?|visits?|times?|messages?|calls?|claims?|requests?|items?|cases?)\b)`,
      "gi",
    ),
  },
  // Six digits or more right after a name: a wristband's or a list's "[NAME] 000781234".
  {
    kind: "mrn",
    needs: "placeholder",
    placeholders: true,
    pattern: rx(String.raw`${AT_DIGIT}(?<=\[NAME\],?\s{1,2})\d{6,10}(?![\w\-/.:]|\.\d|\s{0,2}(?:%|ms|mg|kg|lbs?|ml))`),
  },
  // A patient's key in code and logs: "pt_9920134", "patient_88412".
  {
    kind: "mrn",
    needs: "digit",
    pattern: rx(String.raw`(?<![\w\-.])(?:pt|patient|mrn)_\d{4,14}(?![\w\-])`),
  },
  // A record number glued to its label, as file names carry it: "scan_MRN99120047_page2.pdf".
  {
    kind: "mrn",
    needs: "digit",
    pattern: rx(String.raw`(?<![A-Za-z])(?:MRN|mrn)[_\-]?(\d{5,12})(?!\d)`),
  },
  // A record's number in an API path: "/patients/8812", "/members/40021/claims".
  {
    kind: "mrn",
    needs: "web",
    pattern: rx(String.raw`\/(?:patients?|members?|charts?|mrns?)\/(\d{3,12})(?![\w\-.])`),
  },
  // Card numbers: 13 to 19 digits in groups, with a valid Luhn check digit.
  {
    kind: "account",
    needs: "digit",
    pattern: rx(
      String.raw`(?<![\w\-])\d{4}(?:[\s\-]?\d{4}){2}[\s\-]?\d{1,7}(?![\w\-])|(?<![\w\-])\d{4}[\s\-]\d{6}[\s\-]\d{5}(?![\w\-])`,
    ),
    keep: luhnKeep,
  },
  // Vehicle identification numbers: 17 capitals and digits, five digits at least (I, O and Q are not
  // used in VINs, but OCR puts them for 1 and 0).
  {
    kind: "vehicle",
    needs: "digit",
    pattern: rx(String.raw`(?<![\w\-])(?=[A-Z0-9]{0,16}[A-Z])(?=(?:[A-Z]{0,16}\d){5})[A-Z0-9]{17}(?![\w\-])`),
  },
  // MAC addresses in Cisco's dotted form.
  {
    kind: "device_id",
    needs: "digit",
    pattern: rx(String.raw`(?<![\w.])[0-9a-fA-F]{4}\.[0-9a-fA-F]{4}\.[0-9a-fA-F]{4}(?![\w.])`),
  },
  // A house on a numbered route: "4517 Rte 9", "2100 Hwy 60", "N5432 HWY 57".
  {
    kind: "address",
    needs: "digit",
    pattern: rx(
      String.raw`\b[NSEW]?\d{1,6}\s{1,2}(?:Rte|RTE|Route|ROUTE|Hwy|HWY|Highway|HIGHWAY|State\s{1,2}Route|County\s{1,2}Road|CR|SR|US)[\s\-]{1,2}\d{1,4}[A-Z]?\b`,
    ),
  },
  // Brazil's CEP after the state of an address: "São Paulo - SP, 01304-001".
  {
    kind: "zip",
    needs: "digit",
    pattern: rx(
      String.raw`(?<=[\-,]\s{0,2}(?:AC|AL|AP|AM|BA|CE|DF|ES|GO|MA|MT|MS|MG|PA|PB|PR|PE|PI|RJ|RN|RS|RO|RR|SC|SP|SE|TO),?\s{1,2})\d{5}-\d{3}(?![\w\-])`,
    ),
  },
  // UK postcodes ("LS6 2AB", "SW1A 1AA").
  { kind: "zip", needs: "digit", pattern: rx(String.raw`\b[A-Z]{1,2}\d[A-Z\d]?\s\d[ABD-HJLNP-UW-Z]{2}\b`) },
  // Phone numbers read out digit by digit: "two one two, five five five, oh one nine six".
  {
    kind: "phone",
    needs: "readDigits",
    pattern: rx(String.raw`\b${DIGIT_WORD}(?:[\s,\-]{1,3}${DIGIT_WORD}){6,14}\b`, "gi"),
  },
  // The same in Spanish, Portuguese, French or German: "nueve cinco seis, cinco cinco cinco, cero
  // uno cuatro uno", "null eins fünf eins, zwei drei vier…". Seven words or more, none but digits.
  {
    kind: "phone",
    needs: "readDigitsAbroad",
    pattern: rx(
      String.raw`(?<![\p{L}])${DIGIT_WORD_ABROAD}(?:[\s,.\-]{1,3}${DIGIT_WORD_ABROAD}){6,14}(?![\p{L}])`,
      "giu",
    ),
  },
  // Five to nine digits read out after a ZIP or Social Security cue: "zip is nine four one one zero".
  {
    kind: "zip",
    needs: "always",
    pattern: rx(
      String.raw`\b(?=${DIGIT_WORD})(?<=\b(?:zip|zip code|postal code)\b[^.\n]{0,40}?)${DIGIT_WORD}(?:[\s,\-]{1,3}${DIGIT_WORD}){4,8}\b`,
      "gi",
    ),
  },
  {
    kind: "ssn",
    needs: "ssnWord",
    pattern: rx(
      String.raw`\b(?=${DIGIT_WORD})(?<=\b(?:social|ssn|ss|security)\b[^.\n]{0,40}?)${DIGIT_WORD}(?:[\s,\-.]{1,4}${DIGIT_WORD}){4,8}\b`,
      "gi",
    ),
  },
  // Email addresses spelled out: "rosa dot ibarra at gmail dot com".
  {
    kind: "email",
    needs: "spelled",
    // Found from its spoken "at" (rare), the local part before it taken by `reach`: tried from
    // every word, the local part's scan cost more than any other detector on long prompts.
    pattern: rx(
      String.raw`(?<=[a-z0-9._\-])${SPOKEN("at")}[a-z0-9\-]{1,40}(?:${SPOKEN("dot|period")}[a-z0-9\-]{1,40}){0,3}${SPOKEN("dot|period")}(?:com|org|net|edu|gov|io|[a-z]{2})\b`,
      "gi",
    ),
    reach: new RegExp(String.raw`\b[a-z0-9._\-]{1,40}(?:${SPOKEN("dot|period")}[a-z0-9_\-]{1,40}){0,3}$`, "i"),
  },
  {
    kind: "account",
    needs: "digit",
    pattern: rx(String.raw`(?<![\w\-])\d{4}[\s\-]\d{4}[\s\-]\d{4}[\s\-]\d{1,4}(?![\w\-])`),
  },
  // International first, so "+234 803 555 0192" is not taken for a US number after its country code.
  {
    kind: "phone",
    needs: "digit",
    pattern: rx(
      String.raw`(?<![\w+])\+\d{1,3}(?:[\s.\-]\(?\d{1,8}\)?){1,5}${EXTENSION}(?![\w\-])|(?<![\w+])\+\d{8,15}(?!\d)`,
    ),
    keep: intlPhoneKeep,
  },
  {
    kind: "phone",
    needs: "digit",
    pattern: rx(
      String.raw`(?<![\w+\-])(?:\+?1[\s.\-]?)?(?:\(\d{3}\)\s?|\d{3}[\s.\-])\d{3}[\s.\-]\d{4}${EXTENSION}(?![\w\-])`,
    ),
  },
  // Ten digits in a row. A US number's area code and exchange start with 2–9; ten digits that
  // cannot be one, in a text that speaks of NPIs, with an NPI's check digit, are a provider's NPI
  // ("const TEST_NPIS = [\"1003000126\"]"). Anything else stays redacted: a member id or an MRN
  // is as likely as a phone number.
  {
    kind: "phone",
    needs: "digit",
    pattern: rx(String.raw`(?<![\w+.\-])(?:\+?1)?\d{10}(?![\w\-]|\.\d)`),
    veto: (text, match) => isNpiNotPhone(match[0], text),
  },
  // A local number with its area code in brackets ("(02) 9876 5432"), and seven digits as a US
  // exchange writes them ("555-0147").
  {
    kind: "phone",
    needs: "digit",
    pattern: rx(
      String.raw`(?<![\w\-])\(0\d{1,4}\)\s?\d{3,4}[\s\-]?\d{3,4}(?![\w\-])|(?<![\w\-.$#/:])\d{3}-\d{4}(?![\w\-]|\.\d)`,
    ),
  },
  // Vanity numbers: toll-free with letters ("1-800-FLU-SHOT"), or an area code then letters ("(877) MED-REFL").
  {
    kind: "phone",
    needs: "digit",
    pattern: rx(
      String.raw`(?<![\w\-])(?:1[\s.\-])?\(?8(?:00|33|44|55|66|77|88)\)?[\s.\-][A-Z0-9]{3}[\s.\-]?[A-Z0-9]{4}(?![\w\-])|(?<![\w\-])\(\d{3}\)\s?(?=[A-Z0-9\-]{0,8}[A-Z]{2})[A-Z0-9]{3}-[A-Z0-9]{4}(?![\w\-])`,
    ),
  },
  // National numbers with a trunk 0 in three dashed groups: "090-5555-0199", "03-1234-5678".
  {
    kind: "phone",
    needs: "digit",
    pattern: rx(
      String.raw`(?<![\w\-.])0\d{1,4}(?:-\d{2,4}-|\s\d{3,4}\s)\d{4}(?![\w\-]|\.\d)|(?<![\w\-.])011[\s.\-]\d{1,3}(?:[\s.\-]\d{1,5}){2,4}(?![\w\-]|\.\d)|%2B\d{8,15}(?!\d)`,
    ),
    keep: (value) => (value.replace(/\D/g, "").length >= 10 ? value.length : 0),
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
    // Also in the languages patients write in: "92 años", "95 anos", "97 ans", "91 Jahre", "93 J.",
    // "93 anni", "92 tuổi", "94 taon", "91 lat", "96 år", "92岁", "95세"; glued as an HL7 age field
    // prints it ("104Y"); a birthday ("her 100th birthday").
    pattern: rx(
      String.raw`(?<![\w\-])(?:9\d|1[0-2]\d)(?:\s|-)?(?:years?|yrs?|y\/?o[fm]?|y\.o\.?|años|anos|ans|jahre|jährig(?:e[nrs]?)?|j(?=\.)|jaar|anni|tuổi|taong?|lat|år|vuotta|ani|yaşında|yaş|साल|лет|года|год|ετών)(?:[\s\-]old)?(?![\p{L}])|(?<![\w\-])(?:9\d|1[0-2]\d)\s?(?:岁|歲|歳|세|살)|(?<![\w\-])0?(?:9\d|1[0-2]\d)y(?![\p{L}\d])|(?<![\w\-])(?:9\d|1[01]\d)(?:st|nd|rd|th)(?=\s{1,2}birthday\b)`,
      "giu",
    ),
  },
  // "she's 101", "turns 100", "im 91 btw", "grandpa's 94 this year", "mother alive at 95", "he's
  // really 94": a number over 89 where only an age fits.
  {
    kind: "age",
    needs: "digit",
    pattern: rx(
      String.raw`${AT_DIGIT}(?<=\b(?:she['’]?s|he['’]?s|they['’]re|i['’]?m|is|was|turns|turned|turning|aged?|at age|age of|${PERSON_NOUN}['’]s|(?:alive|living)\s{1,2}at)\s{1,2}(?:${NEARLY}|(?:really|actually|still|only|probably|easily)\s{1,2})?)(?:9\d|1[0-2]\d)(?=\s{0,2}(?:[.,;:!?)"”—–]|$|and\b|or\b|but\b|years?\b|yrs?\b|y\/?o\b|next\b|this\b|today\b|tomorrow\b|soon\b|last\b|in\b|on\b|now\b|too\b|btw\b|though\b|tho\b|(?:she|he|they)\b))`,
      "gi",
    ),
  },
  // A birthday's count: "we sang for Mr. [NAME]'s 95th today", "her 100th birthday".
  {
    kind: "age",
    needs: "digit",
    pattern: rx(
      String.raw`${AT_DIGIT}(?<=(?:['’]s|\b(?:his|her|their|my))\s{1,2})(?:9\d|1[01]\d)(?:st|nd|rd|th)(?=\s{1,2}(?:birthday|bday|b-day|party|celebration)\b|\s{1,2}(?:today|yesterday|tomorrow)\b|\s{0,2}[.,;:!?)])`,
      "gi",
    ),
  },
  // Clinical shorthand: "91M", "99 F", "94yo F" (the sex letter right after the age; not a
  // temperature, "temp 97 F"), and the other way round before a pause, as triage notes write it:
  // "F 97, confused", "M93.".
  {
    kind: "age",
    needs: "digit",
    pattern: rx(
      String.raw`(?<![\w\-.]|\b(?:temp|temperature|T|t)\s{0,2}:?\s{0,2})(?:9\d|1[01]\d)\s?[MF](?![\w\-])|${AT_DIGIT}(?<=(?<![\w\-.])[MF]\s?)(?:9\d|1[01]\d)(?=\s{0,2}[,;)]|\.(?!\d)|\s{1,2}(?:y\/?o|yrs?|years?)\b)`,
    ),
  },
  // "a woman of 99", "a man of 93": an age after a person.
  {
    kind: "age",
    needs: "digit",
    pattern: rx(
      String.raw`${AT_DIGIT}(?<=\b(?:woman|man|lady|gentleman|person|patient|resident|member|widow|widower|veteran|grandmother|grandfather)\s{1,2}of\s{1,2})(?:9\d|1[0-2]\d)(?![\w\-]|[.,]\d)`,
      "gi",
    ),
  },
  // "F/97", "M/93".
  {
    kind: "age",
    needs: "digit",
    pattern: rx(String.raw`(?<=(?<![\w/])[MF]\/)(?:9\d|1[01]\d)(?![\w\-]|[.,]\d)`),
  },
  // "[NAME], 98, still drives": a number over 89 set off right after a name.
  {
    kind: "age",
    needs: "placeholder",
    placeholders: true,
    pattern: rx(String.raw`${AT_DIGIT}(?<=\[NAME\],\s{1,2})(?:9\d|1[0-2]\d)(?=\s{0,2}(?:[,;)!?]|\.(?!\d)|$))`),
  },
  // "he'll be 91", "turning 95": a number over 89 a person turns.
  {
    kind: "age",
    needs: "digit",
    pattern: rx(
      String.raw`${AT_DIGIT}(?<=\b(?:(?:he|she|they)['’]ll\s{1,2}be|(?:he|she)\s{1,2}will\s{1,2}be|turns|turning|turned|cumple|cumplió|cumplirá|completa|completou)\s{1,2})(?:9\d|1[0-2]\d)(?![\w.\-%]|\s{0,2}(?:%|percent|ms|mg|kg|lbs?|minutes?|min|hours?|days?)\b)`,
      "gi",
    ),
  },
  // "[NAME] is 92", "[NAME] turned 101": a number over 89 said of a person.
  {
    kind: "age",
    needs: "placeholder",
    placeholders: true,
    pattern: rx(
      String.raw`${AT_DIGIT}(?<=\[NAME\]\s{1,2}(?:is|was|turned|turns|just\s{1,2}turned)\s{1,2})(?:9\d|1[0-2]\d)(?![\w.\-%]|\s{0,2}(?:%|percent|ms|mg|kg|lbs?|minutes?|min|hours?|days?)\b)`,
    ),
  },
  // "[NAME] (98)", "the patient (94)": a number over 89 in brackets after a name or a person.
  {
    kind: "age",
    needs: "digit",
    placeholders: true,
    pattern: rx(
      String.raw`${AT_DIGIT}(?<=(?:\[NAME\]|\b(?:pt|patient|${PERSON_NOUN}))\s{0,2}\()(?:9\d|1[0-2]\d)(?=!?\))`,
      "gi",
    ),
  },
  // "[NAME] 96, [NAME] 92.", "pt 97.", "my mother, 92, needs…", "decedent 102,": a number over 89
  // right after a name or a word for one person (set off by a comma or not), then a pause or the
  // line's end, as a roster prints it ("Rm 104 [NAME] 91"); after a name and its birth date too
  // ("[NAME], [DOB], 93", "[NAME] ([DATE], 93)"). Not 120 and over: "Na 129," is a lab value after
  // a word taken for a name.
  {
    kind: "age",
    needs: "digit",
    placeholders: true,
    pattern: rx(
      String.raw`${AT_DIGIT}(?<=(?:\[NAME\](?:,?\s{1,2}\(?\[(?:DOB|DATE)\])?|\b(?:pt|patient|${PERSON_NOUN})),?\s{1,2})(?:9\d|1[01]\d)(?=[ \t]{0,2}(?:[.,;!?)]|\r?\n|$))`,
      "gi",
    ),
  },
  // "he died at 101", "passed away at 99", "at 99 she still drives", "dad just hit 90": a number over
  // 89 that a life reaches.
  {
    kind: "age",
    needs: "digit",
    pattern: rx(
      String.raw`${AT_DIGIT}(?:(?<=\b(?:died|passed(?:\s{1,2}away)?|death)\s{1,2}at\s{1,2}(?:the\s{1,2}age\s{1,2}of\s{1,2})?)|(?<=\b(?:he|she|they|${PERSON_NOUN})\s{1,2}(?:just\s{1,2}|finally\s{1,2})?(?:hit|reached|celebrated|celebrates)\s{1,2}))(?:9\d|1[0-2]\d)(?![\w.\-%]|\s{0,2}(?:%|percent|ms|mg|kg|lbs?|minutes?|min|hours?|days?)\b)|${AT_DIGIT}(?<=\bat\s{1,2})(?:9\d|1[0-2]\d)(?=,?\s{1,2}(?:she|he)\b)`,
      "gi",
    ),
  },
  // Days in words: "the twenty-first of March", "March the third"; and dates read out, as voice
  // transcripts write them: "July ninth nineteen sixty-one", "december third, nineteen forty-eight"
  // (not "you may first check…": "may first" only with a year).
  {
    kind: "date",
    needs: "monthWord",
    pattern: rx(
      String.raw`\b${ORDINAL_WORD}\s{1,2}of\s{1,2}${MONTH}\b(?:,?\s{1,2}\d{4})?|\b${MONTH}\s{1,2}the\s{1,2}${ORDINAL_WORD}\b|\b${MONTH}\s{1,2}${ORDINAL_WORD}(?:,?\s{1,2}${YEAR_WORDS})?\b`,
      "gi",
    ),
    veto: (_text, match) => /^may\s{1,2}first$/i.test(match[0]),
  },
  // A day of the month on its own, said of someone's day: "moved to the 21st", "on the 9th",
  // "Thursday the 17th", "last Tuesday, the 11th"; in words only before a pause or a small word
  // ("died on the fourteenth, please…", not "on the first try"). Not a schedule's day: "billing
  // runs on the 1st", "on the 1st of each month".
  {
    kind: "date",
    needs: "digit",
    pattern: rx(
      String.raw`${AT_DIGIT}(?<=${DAY_OF_MONTH_LEAD})(?:[1-9]|[12]\d|3[01])(?:st|nd|rd|th)\b(?!\s{1,2}(?:attempt|try|time|step|run|retry|day|week|floor|visit|call|page|line|row|column|one|shift|dose|round|place|grade|party|quarter|period|half|year|month|trimester|cycle|session|edition|birthday|of\s(?:the|those|these|them|each|every|any))\b)`,
      "gi",
    ),
    veto: isScheduleDay,
  },
  {
    kind: "date",
    needs: "always",
    pattern: rx(
      String.raw`\bthe\s{1,2}(?<=${DAY_OF_MONTH_LEAD})(${ORDINAL_WORD})(?![\w\-])(?=\s{0,2}(?:[.,;:!?()"'”—–]|$)|\s{1,2}(?:at|and|or|but|for|to|in|so|when|then|after|before|because|until|[ap]\.?m\.?|morning|afternoon|evening|night|of\s{1,2}(?:${MONTH}|this|last|next)\b)\b)`,
      "gi",
    ),
    veto: isScheduleDay,
  },
  // A day of the month said as a date is said, whatever comes before: "came in the 14th and again",
  // "ICU through the 8th", "(the 6th)", "not the 31st", "the 19th?". Only before a pause or a
  // small word: "the 3rd floor", "the 2nd reminder" and "the 5th percentile" are no dates; nor is
  // a system's day ("the release goes out the 17th").
  {
    kind: "date",
    needs: "digit",
    pattern: rx(
      String.raw`${AT_DIGIT}(?<=\bthe\s{1,2})(?:[1-9]|[12]\d|3[01])(?:st|nd|rd|th)(?![\w\-])(?=\s{0,2}(?:[.,;:!?)"'”—–]|$)|\s{1,2}(?:(?:and|or)(?!\s{1,2}(?:the\s{1,2})?\d{1,2}(?:st|nd|rd|th)\s{1,2}[a-z])|but|not|instead|through|thru|to|until|at|in|when|so|then|i\s{1,2}think|of\s{1,2}(?:this|last|next)\s{1,2}month)\b)`,
      "gi",
    ),
    // Not an example quoted for a parser: "to understand 'the 3rd', 'next Tuesday'".
    veto: (text, match) =>
      isScheduleDay(text, match) ||
      isSystemEventDate(text, match) ||
      (/['"“‘]the\s{1,2}$/i.test(text.slice(Math.max(0, match.index - 6), match.index)) &&
        /^['"”’]/.test(text.charAt(match.index + match[0].length))),
  },
  // A stay's or a course's days, a month and a day to a month and a day: "inpatient 3/11–3/15,
  // SNF 3/15–4/2". Not a score's range ("pain 3/10-5/10"), a recipe's ("1/2-3/4 cup") nor a
  // system's ("code freeze 03/13 – 03/14").
  {
    kind: "date",
    needs: "digit",
    pattern: rx(
      String.raw`${AT_DIGIT}(?<![\w/\-.[]|\[\s|\b(?:pain|scores?|scored|rated|rating|scale|level|grade|ratio)\s{1,2})(?:${MONTH_DAY}(?=\s{0,2}[–—-]\s{0,2}${MONTH_DAY}(?![\w/\-]|\.\d))|(?<=(?<![\w/\-.])${MONTH_DAY}\s{0,2}[–—-]\s{0,2})${MONTH_DAY}(?![\w/\-]|\.\d))(?!\s{1,2}(?:cups?|tabs?|tablets?|tsp|tbsp|inch(?:es)?|in|mg|ml|of|scale)\b)`,
      "gi",
    ),
    veto: (text, match) => isRatingList(text, match) || isSystemEventDate(text, match),
  },
  // The last digits of a record, a plan's number, a card or an account: "MRN ends in 0448", "the
  // member id ends in 5517", "visa ending in 4421", "acct ending 8812". Their kind is the one the
  // sentence names before them; a card's or an account's otherwise.
  ...(
    [
      ["mrn", String.raw`\b(?:mrn|mr#|chart|record|patient\s{1,2}id)\b`],
      ["member_id", String.raw`\b(?:member|medicare|medicaid|policy|subscriber|insurance|plan)\b`],
      ["account", null],
    ] as const
  ).map(
    ([kind, named]): Detector => ({
      kind,
      needs: "digit",
      pattern: rx(
        String.raw`${AT_DIGIT}(?<=${named === null ? "" : `${named}[^.\n]{0,32}`}\b(?:ending|ends)\s{1,2}(?:in\s{1,2}|with\s{1,2})?)\d{4}(?![\w\-/]|\.\d)`,
        "gi",
      ),
      // A year a thing ends in ("the contract ends in 2027") is no one's number.
      veto: (text, match) =>
        named === null &&
        /^(?:19|20)\d\d$/.test(match[0]) &&
        !/\b(?:card|visa|mastercard|amex|acct|account)\b/i.test(text.slice(Math.max(0, match.index - 48), match.index)),
    }),
  ),
  // A day and its month in the other languages patients write in, no year needed: "14 februari",
  // "3 lutego", "7. März", "3 марта", "15 окт.", "7 Ocak", "5 मार्च", "14/ene", "10月3日", "2025年3月8日".
  {
    kind: "date",
    needs: "digit",
    pattern: rx(
      String.raw`${AT_DIGIT}(?<![\w.\-/])(?:(?:[1-9]|[12]\d|3[01])\.?\s{1,2}(?:${MONTH_ABROAD}|${MONTH_OTHER})(?:\.|(?![\p{L}\-]))(?:\s{1,2}\d{4}(?:\s?г\.?)?)?|(?:0?[1-9]|[12]\d|3[01])[/\-](?:ene|feb|mar|abr|may|jun|jul|ago|sep|set|oct|nov|dic)(?:[/\-](?:\d{4}|\d{2}))?(?![\p{L}\d])|(?:\d{4}\s?年\s?)?(?:0?[1-9]|1[0-2])\s?月\s?(?:0?[1-9]|[12]\d|3[01])\s?日)`,
      "giu",
    ),
    veto: isSystemEventDate,
  },
  // A weekday and its day, as Spanish, Portuguese, French, Italian, German and Dutch write them:
  // "el lunes 4", "samedi 12", "am Montag, dem 3.", "donderdag de 12e", "giovedì 6/11".
  {
    kind: "date",
    needs: "digit",
    pattern: rx(
      String.raw`${AT_DIGIT}(?<=\b(?:lunes|martes|mi[ée]rcoles|jueves|viernes|s[áa]bado|domingo|segunda|ter[çc]a|quarta|quinta|sexta|lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|luned[ìi]|marted[ìi]|mercoled[ìi]|gioved[ìi]|venerd[ìi]|domenica|montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag|maandag|dinsdag|woensdag|donderdag|vrijdag|zaterdag|zondag),?\s{1,2}(?:(?:dem|den|de|el|le|il)\s{1,2})?)(?:[1-9]|[12]\d|3[01])(?:[/.](?:0?[1-9]|1[0-2])(?:[/.](?:\d{4}|\d{2}))?|\.|e|º)?(?![\d:]|[.,]\d|\s{0,2}(?:h|uhr|%|horas?|heures?|ore|uur)\b)`,
      "giu",
    ),
  },
  // Ages over 89 in words, in the languages patients write in, with their word for years:
  // "noventa y cuatro años", "noventa e sete anos", "quatre-vingt-seize ans", "zweiundneunzig
  // Jahre", "novantadue anni", "cien años". Found from the word for years (rare: tried only at an
  // "a" or a "j"), the number before it taken with it.
  {
    kind: "age",
    needs: "ageWordAbroad",
    pattern: rx(String.raw`(?=[aj])(?<=\b${AGE_ABROAD}\s{1,2})(?:años|anos|ans|jahre|anni)(?![\p{L}])`, "giu"),
    reach: new RegExp(String.raw`\b${AGE_ABROAD}\s{1,2}$`, "iu"),
  },
  // Ages over 89 in words: "ninety-three year old", "she is ninety-nine", "[NAME], ninety-three".
  {
    kind: "age",
    needs: "always",
    placeholders: true,
    pattern: rx(
      String.raw`\b(?:ninety(?:[\s\-](?:one|two|three|four|five|six|seven|eight|nine))?|(?:a|one)\s(?:hundred)(?:\s(?:and\s)?(?:one|two|three|four|five|six|seven|eight|nine|ten))?)(?=[\s\-]{1,2}(?:years?|yrs?)\b|\s{0,2}(?:y\/?o)\b)|(?<=\b(?:(?:she['’]?s|he['’]?s|is|turns|turned|turning|aged?|pushing|(?:he|she|they)['’]ll\s{1,2}be|(?:he|she)\s{1,2}will\s{1,2}be)\s{1,2}(?:${NEARLY})?["“]?|age[ds]?\s{0,2}[:=]\s{0,2}|${PERSON_NOUN},\s{1,2})|\[NAME\],?\s{1,2})(?:ninety(?:[\s\-](?:one|two|three|four|five|six|seven|eight|nine))?|(?:a|one)\shundred(?:\s(?:and\s)?(?:one|two|three|four|five|six|seven|eight|nine|ten))?)\b|(?<=\bat\s{1,2})(?:ninety(?:[\s\-](?:one|two|three|four|five|six|seven|eight|nine))?|(?:a|one)\shundred(?:\s(?:and\s)?(?:one|two|three|four|five|six|seven|eight|nine|ten))?)(?=\s{0,2}(?:[.,;!?)"”]|$)|,?\s{1,2}(?:she|he)\b)`,
      "gi",
    ),
  },
  // A whole postal line after its label, in the languages of the forms builders paste: "adresse:
  // 27 rue des Martyrs, 75009 Paris", "Address: Flat 302, Sai Krupa Apts, 14th Cross, Bengaluru
  // 560038". Capitalised words, numbers and the small words of street names, up to the first other word.
  {
    kind: "address",
    needs: "always",
    pattern: rx(
      String.raw`\b(?:[Aa]ddress|ADDRESS|[Aa]ddr|[Aa]dresse?|ANSCHRIFT|[Aa]nschrift|[Dd]irecci[oó]n|[Dd]omicilio|[Ee]ndere[cç]o|[Mm]orada|[Ii]ndirizzo)(?:\s{1,2}(?:du|de|do|da|del)\s{1,2}\p{L}+)?\s{0,2}:\s{0,2}(?!\[)(${POSTAL_WORD}(?:(?:,\s{1,2}|\s{1,2}(?:-\s{1,2})?|\s{0,2}\/\s{0,2})${POSTAL_WORD}){1,15})`,
      "gu",
    ),
    keep: postalLineKeep,
  },
  // A street named with its type as a suffix, number after, as in Germany and the Netherlands
  // ("Lindenstraße 42, 10969 Berlin", "Prinsengracht 263-1, 1016 GV Amsterdam").
  {
    kind: "address",
    needs: "digit",
    pattern: rx(
      String.raw`${AT_DIGIT}(?<=\b\p{Lu}\p{Ll}{2,30}(?:stra(?:ß|ss)e|str\.|weg|gasse|platz|allee|damm|ring|gracht|straat|laan|plein|kade|dijk|singel|steeg)\s{1,2})\d{1,4}[a-z]{0,2}(?:-\d{1,3}[a-z]{0,2})?(?:,\s{1,2}\d{4,5}(?:\s[A-Z]{2})?\s\p{Lu}[\p{L}\-]+)?(?![\w\-])`,
      "gu",
    ),
    // The match starts at the house number; the street's name before it is part of the address.
    reach: STREET_NAME_BEFORE,
  },
  // Street type first, number after ("Rua das Flores 220, apto 51"), military mail ("PSC 1234,
  // Box 5678", "APO AE 09012"), and Wisconsin's grid ("W 210 N 4567 Pine Rd").
  {
    kind: "address",
    needs: "digit",
    pattern: rx(
      String.raw`\b(?:[Rr]ua|[Cc]alle|[Aa]venida|Av\.|Rue|Via|Travessa|Alameda|Carrera|Camino|Paseo|Calzada|Estrada|Pra[çc]a|Carretera)\s{1,2}(?:(?:das|dos|da|do|de|del|des|du|la|le|los|las)\s{1,2})?(?:(?:\p{Lu}[\p{L}'’\-]+|\d{1,2}|de|del|da|do)\s{1,2}){0,3}\p{Lu}[\p{L}'’\-]+(?:\s{1,2}(?:#\s?)?\d{1,6}|,\s{1,2}\d{1,4}(?![\d\-]))(?:,?\s{1,2}(?:apto|apt|piso|depto|dpto|casa|bloco)\.?\s{0,2}\d{1,5})?|\b[Cc]alle\s{1,2}\d{1,3}\s{1,2}#\s?\d{1,6}|\b(?:PSC|CMR|Unit)\s{1,2}\d{1,5},?\s{1,2}Box\s{1,2}\d{1,5}(?:,?\s{1,2}(?:APO|FPO|DPO))?|\b[NSEW]\s?\d{1,4}\s{1,2}[NSEW]\s?\d{1,5}\s{1,2}(?:\p{Lu}\p{Ll}+\s{1,2}){1,3}${STREET_SUFFIX}\b\.?`,
      "gu",
    ),
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
      String.raw`\b${HOUSE_NUMBER}\s{1,3}(?:(?:[a-z]{2,20}|\d{1,3}(?:st|nd|rd|th))\s{1,3}){1,3}(?:street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|highway|hwy|parkway|pkwy|drive|court|terrace)\b\.?${UNIT}`,
      "gi",
    ),
  },
  // A professional license after its credential: "RN 2291847", "LCSW 27715", "RN-R204871", "CSR 0082341".
  {
    kind: "license",
    needs: "digit",
    pattern: rx(
      String.raw`(?=[A-Z\d\-])(?<=\b(?:RN|LPN|LVN|APRN|CRNA|CNM|PA-C|RPh|RPH|LCSW|LMSW|LMFT|LPC|LMHC|CSR|CDS|CCHI|NCCPA)[\s\-#:]{1,3})[A-Z]{0,2}-?\d{4,9}(?![\w\-])`,
    ),
  },
  // A device named before its serial: "patch Z4A2219088", "cycler 1A08412", "ICCID 8901…", "pump_asset=IV-22871".
  {
    kind: "device_id",
    needs: "digit",
    pattern: rx(
      String.raw`(?=[A-Z0-9\-]{0,24}\d)(?=[A-Z0-9\-]{5,})(?<=\b(?:pump|patch|cycler|monitor|meter|transmitter|sensor|hub|tablet|glucometer|CGM|pod|receiver|hearing aids?|ICCID|SIM|asset(?:[_\s-]?tag)?|[a-z]+_asset|left|right)["']?\s{0,2}[=:#]?\s{0,2}["']?)[A-Z0-9](?:[A-Z0-9]|-(?=[A-Z0-9])){4,24}(?![\w\-.])`,
      "g",
    ),
  },
  // Utah's grid ("2150 E 3300 S") and Wisconsin's rural numbers ("N5467 County Road K").
  {
    kind: "address",
    needs: "digit",
    pattern: rx(
      String.raw`\b\d{1,5}\s[NSEW]\s\d{1,5}\s[NSEW]\b|\b[NSEW]\d{3,5}\s(?:County\s(?:Road|Rd|Highway|Hwy|Trunk)|State\s(?:Road|Highway|Hwy)|Highway|Hwy)\s[A-Z0-9]{1,3}\b|\bPost\sOffice\sBox\s\d{1,8}\b|\bHCR\s\d{1,4},?\s(?:Box|BOX)\s\d{1,6}\b`,
    ),
  },
  // Wisconsin's compact grid: "W156N11500 Pilgrim Rd".
  {
    kind: "address",
    needs: "digit",
    pattern: rx(String.raw`\b[NSEW]\d{2,4}[NSEW]\d{3,6}\s{1,3}(?:[A-Z][a-z]{1,20}\s{1,3}){1,4}${STREET_SUFFIX}\b\.?`),
  },
  // Capitals, as return mail and OCR print them: "4410 PINE RIDGE CT, SAVANNAH".
  {
    kind: "address",
    needs: "digit",
    pattern: rx(
      String.raw`\b${HOUSE_NUMBER}\s{1,3}(?:(?:[NSEW]\.?|[A-Z]{2,20}|\d{1,3}(?:ST|ND|RD|TH))\s{1,3}){1,4}(?:STREET|ST|AVENUE|AVE|ROAD|RD|BOULEVARD|BLVD|LANE|LN|DRIVE|DR|COURT|CT|CIRCLE|CIR|PLACE|PL|WAY|TERRACE|TER|PARKWAY|PKWY|HIGHWAY|HWY|TRAIL|TRL|LOOP|PIKE)\b\.?(?:,?\s{1,2}(?:APT|UNIT|STE|SUITE|LOT|#)\.?\s{0,2}#?\s{0,2}[A-Z0-9\-]{1,8}(?![\w\-]))?(?:,\s{1,2}[A-Z]{3,20}(?:\s[A-Z]{3,20}){0,2}(?=,?\s{1,2}${STATES}\b))?`,
    ),
  },
  // Lower case, with a direction letter: "2215 e cesar chavez st".
  {
    kind: "address",
    needs: "digit",
    pattern: rx(
      String.raw`\b${HOUSE_NUMBER}\s{1,3}[nsew]\.?\s{1,3}(?:[a-z]{2,20}\s{1,3}){1,3}(?:street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|drive|dr|court|ct|way|place|pl)\b\.?`,
    ),
  },
  {
    kind: "address",
    needs: "digit",
    pattern: rx(
      String.raw`\b(?:Lot|LOT|Trlr|Space|Spc)\.?\s{0,2}#?\s{0,2}\d{1,5}(?![\w\-])(?=\s{0,2}(?:[,;\n]|$|city\b|zip\b))`,
    ),
  },
  // Canadian postal codes: "H2J 2L8".
  {
    kind: "zip",
    needs: "digit",
    pattern: rx(String.raw`\b[ABCEGHJ-NPRSTVXY]\d[ABCEGHJ-NPRSTV-Z]\s?\d[ABCEGHJ-NPRSTV-Z]\d\b`),
  },
  // A card's number with all but its last digits masked, as receipts, logs and statements print
  // it: "xxxx-xxxx-xxxx-4471", "************8821", "5412 75** **** 4471", "card ending •••• 2210".
  {
    kind: "account",
    needs: "masked",
    pattern: rx(
      String.raw`(?<![\w*•●])(?:(?:[xX*•●]{4}[\s\-]?){2,3}[xX*•●]{4}[\s\-]?|[xX*•●]{8,15}|\d{4}[\s\-]?\d{2}[xX*•●]{2}[\s\-]?[xX*•●]{4}[\s\-]?|[•●*]{4}\s)\d{4}(?![\w\-])`,
    ),
  },
  // A flat, a suite, a unit or a building on its own ("Apt 4B", "Unit 12"), and PO boxes. A room
  // only inside an address ("Building 4, Room 112, …", "Room 305, 2-11-4 Nishi-Shinjuku"): on its
  // own a room number is a place in a hospital or an office ("Room 312"), not where someone lives.
  {
    kind: "address",
    needs: "digit",
    pattern: rx(
      String.raw`\b(?:[Aa]pt|[Aa]partment|APT|Suite|Ste|Unit|Bldg|(?<=\b(?:Building|Bldg|Hall|Block|Tower)\.?\s{1,2}[A-Za-z0-9\-]{1,6},\s{1,2})Room|Room(?=\.?\s{0,3}#?\s{0,2}[A-Za-z0-9\-]{1,8},\s{1,2}\d))\.?\s{0,3}#?\s{0,2}(?=[A-Za-z0-9\-]{0,8}\d)[A-Za-z0-9\-]{1,8}(?![\w\-])|\b[Pp]\.?\s?[Oo]\.?\s{0,2}[Bb][Oo][Xx]\s{0,3}\d{1,8}\b`,
    ),
  },
  // Streets named after their type ("9 Rue des Lilas", "6120 Camino Real"), Latin American
  // street grids ("Calle 8 #45-12"), rural routes and private mailboxes, a house number with a
  // direction ("500 S Main"), lower-case streets with ordinals ("210 east 89th st").
  {
    kind: "address",
    needs: "digit",
    pattern: rx(
      String.raw`\b\d{1,6}\s{1,3}(?:Rue|Calle|Camino|Avenida|Av\.|Via|Rua|Carrera|Paseo|Chemin|Strasse|Straße)\s{1,2}(?:(?:de|des|du|la|le|del|los|las|da|do|dos)\s{1,2})?(?:\p{Lu}[\p{L}'’\-]+\s?){1,3}|\b(?:Calle|Carrera|Avenida|Diagonal|Transversal)\s{1,2}\d{1,3}[A-Z]?\s{0,2}#\s{0,2}\d{1,3}-\d{1,3}|\b(?:RR|R\.R\.|[Rr]ural\s{1,2}[Rr]oute|RURAL\s{1,2}ROUTE|HC|Star\s{1,2}Route|RFD|[Rr]oute|[Rr]te)\s{0,2}\d{1,3},?\s{1,2}(?:Box|BOX|box)\s{1,2}\d{1,5}[a-zA-Z]?|\b[Bb]ox\s{1,2}\d{1,5}[a-zA-Z]?,?\s{1,2}(?:RR|[Rr]te|[Rr]oute|RFD)\s{0,2}\d{1,3}\b|\bPOB\s{0,2}\d{1,6}\b|\bPMB\s{0,2}#?\s{0,2}\d{1,6}\b|\b\d{1,6}\s{1,2}[NSEW]\.?\s{1,2}\p{Lu}\p{Ll}{2,20}\b`,
      "gu",
    ),
  },
  {
    kind: "address",
    needs: "digit",
    pattern: rx(
      String.raw`\b\d{1,6}\s{1,2}(?:north|south|east|west|n|s|e|w)\s{1,2}\d{1,3}(?:st|nd|rd|th)\s{1,2}(?:street|st|avenue|ave|road|rd)\b\.?`,
      "gi",
    ),
  },
  {
    kind: "zip",
    needs: "digit",
    placeholders: true,
    pattern: rx(String.raw`(?:\b(?:APO|FPO|DPO)|\[ADDRESS\])\s{1,2}(?:AE|AP|AA)\s{1,2}(\d{5})(?!\d)`),
  },
  // A ZIP right after an address already found and its city: "[ADDRESS] Smyrna 30080", "[ADDRESS], [ADDRESS] 606142231".
  {
    kind: "zip",
    needs: "placeholder",
    placeholders: true,
    pattern: rx(
      String.raw`${AT_DIGIT}(?<=\[ADDRESS\](?:${CELL_GAP}(?:\[ADDRESS\]|\p{Lu}[\p{L}.'’\-]{1,20}(?: \p{Lu}[\p{L}.'’\-]{1,20}){0,2})){0,2}${CELL_GAP})\d{5}(?:-?\d{4})?(?![\w\-]|\.\d)`,
      "gu",
    ),
  },
  // HL7 address components ("…^^NASHUA^NH^03060^^H"): the city before a state and the ZIP after one.
  {
    kind: "zip",
    needs: "digit",
    pattern: rx(String.raw`${AT_DIGIT}(?<=\^(?:${STATES})\^)\d{5}(?:-?\d{4})?(?=\^|\||$|\s)`),
  },
  {
    kind: "address",
    needs: "digit",
    pattern: rx(String.raw`(?<=\^)\p{Lu}[\p{L} .'’\-]{1,30}(?=\^(?:${STATES})\^\d{5})`, "gu"),
  },
  // "blue house at 2250 Ridgeway": a house number and a capitalised name after "at".
  {
    kind: "address",
    needs: "digit",
    pattern: rx(
      String.raw`${AT_DIGIT}(?<=\b(?:at|lives at|living at|moved to|moved from|from)\s{1,2})\d{1,6}\s{1,2}\p{Lu}\p{Ll}{2,20}\b(?=\s{0,2}[,.;'")]|\s{1,2}(?:side|back|front|apt|unit|#|to|last|and)\b)`,
      "gu",
    ),
  },
  // A county, a geographic subdivision smaller than a state.
  {
    kind: "address",
    needs: "always",
    pattern: rx(String.raw`\b\p{Lu}\p{Ll}{2,20}(?:\s\p{Lu}\p{Ll}{2,20})?\s(?:County|Parish)\b`, "gu"),
  },
  // A postcode right after an address already found ("[ADDRESS], 75019 Paris").
  {
    kind: "zip",
    needs: "placeholder",
    placeholders: true,
    pattern: rx(String.raw`${AT_DIGIT}(?<=\[ADDRESS\],?\s{1,2})\d{4,5}(?=\s{1,2}\p{Lu})`, "gu"),
  },
  // The city after an address already found: "[ADDRESS], Boca Raton", "[ADDRESS] 3, Leeds".
  {
    kind: "address",
    needs: "placeholder",
    placeholders: true,
    pattern: rx(
      String.raw`(?=\p{Lu})(?<=\[ADDRESS\](?:\s{1,2}\d{1,4})?(?:,\s{1,2}|${CELL})(?:\[ZIP\]\s{1,2})?)(?:(?!(?:${STATE_NAMES}|${STATES}|${COUNTRIES})\b)\p{Lu}(?:[a-z]{1,2}\.|[\p{L}'’\-]*\p{L})\s?){1,3}(?<!['’])(?=[,;.\s"'|]|$)`,
      "gu",
    ),
  },
  // The city between an address and its state and ZIP without a comma, as OCR and forms print them:
  // "[ADDRESS] PORTLAND ME [ZIP]", "[ADDRESS] Phoenix [ZIP]"; not a product's acronym ("[ADDRESS]
  // SMS [ZIP]", a fast-check counterexample).
  {
    kind: "address",
    needs: "placeholder",
    placeholders: true,
    pattern: rx(
      String.raw`(?=\p{Lu})(?<=\[ADDRESS\]\s{1,2})(?!(?:SMS|MMS|MRN|SSN|DOB|NPI|EHR|EMR|API|URL|PDF|IVR|OTP|FAX|PHI|PII|HIPAA|FHIR|CSV|JSON|XML|SQL|SSO|MFA|CRM|ID|PO)\b)(?:(?!(?:${STATE_NAMES}|${STATES}|${COUNTRIES})\b)\p{Lu}[\p{L}'’\-]*\p{L}(?:\s(?=\p{Lu}))?){1,3}(?=\s{1,2}(?:(?:${STATES})\s{1,2})?(?:\[ZIP\]|\d{5}(?:-\d{4})?\b))`,
      "gu",
    ),
  },
  // Cities and streets given as keys: "city: Marlow Heights", "city=Cincinnati", "street=1337+Vine+St".
  {
    kind: "address",
    needs: "addressKey",
    pattern: rx(
      String.raw`(?=[\p{L}0-9])(?<=(?:\b|_)(?:city|town|street|address(?:${_}line)?(?:${_}\d)?|addr\d?|line[12]|house${_}number|straat|huisnummer|plaats)["']?\s{0,2}[:=]\s{0,2}["']?)(?!\[)(?:[\p{L}0-9][\p{L}0-9'’.#\-+]*(?:[ +](?=[\p{L}0-9#]))?){1,6}`,
      "giu",
    ),
  },
  // "Springfield, IL 62704": the city is a geographic subdivision smaller than a state.
  {
    kind: "address",
    needs: "digit",
    pattern: rx(String.raw`\b[A-Z][a-z]{1,20}(?:\s[A-Z][a-z]{1,20}){0,2}(?=,\s{1,2}${STATES}\s{1,2}\d{5}(?!\w))`),
  },
  // Where a text speaks of Medicare, an MBI typed in lower case ("2mt6yf3gu90"); where it speaks
  // of a device's serial, a serial-shaped token (capitals and digits, a letter and four digits at
  // least, seven characters or more), not a model, part, lot or version. The token is looked for
  // first (rare), the text's words after (a scan of the whole text).
  {
    kind: "member_id",
    needs: "digit",
    pattern: rx(
      String.raw`(?<![\w\-])[1-9]${MBI_LETTER}[${MBI_LETTER.slice(1, -1)}0-9]\d[\s\-]?${MBI_LETTER}[${MBI_LETTER.slice(1, -1)}0-9]\d[\s\-]?${MBI_LETTER}{2}\d{2}(?![\w\-])`,
      "gi",
    ),
    veto: (text) => !cueIn(MEDICARE_CUE, text),
  },
  {
    kind: "device_id",
    needs: "digit",
    pattern: rx(
      String.raw`(?<![\w\-.:/])(?=[A-Z0-9\-]{0,24}\d(?:-?\d){3})(?=[A-Z0-9\-]{0,24}[A-Z])[A-Z0-9](?:[A-Z0-9]|-(?=[A-Z0-9])){6,24}(?![\w\-]|\.\w)`,
    ),
    veto: (text, match) =>
      !cueIn(SERIAL_CUE, text) || NOT_A_SERIAL_BEFORE.test(text.slice(Math.max(0, match.index - 24), match.index)),
  },
  // "TX 75001". Outside an address line (no comma before the state), five digits that are not a
  // ZIP of that state are something else: "California 99457 remote monitoring" is a CPT code.
  {
    kind: "zip",
    needs: "digit",
    // From the digits, the state looked behind for (and read again by the veto).
    pattern: rx(String.raw`${AT_DIGIT}(?<=\b(?:${STATES}|${STATE_NAMES})\s{1,2})\d{5}(?:-\d{4})?(?![\w\-])`, "gi"),
    veto: notThatStatesZip,
  },
  // A US city and five digits: "columbus 43215", "Chicago 60623".
  {
    kind: "zip",
    needs: "digit",
    pattern: rx(
      String.raw`${AT_DIGIT}(?<=\b\p{L}[\p{L}'’.\-]{2,20},?\s{1,2})\d{5}(?:-\d{4})?(?![\w\-]|\.\d|\s{0,2}(?:%|ms|mg|requests?|rows?|patients?|people|calls?|messages?|visits?))`,
      "gu",
    ),
    veto: (text, match) => !isCityBefore(text, match.index),
  },
  // A state and a ZIP in neighbouring cells of a row ('"VT","05672"', "|CA|91501|",
  // "burbank,ca,91501"): only five digits that one of that state's ZIPs starts with.
  {
    kind: "zip",
    needs: "digit",
    pattern: rx(
      String.raw`${AT_DIGIT}(?<=(?<![\p{L}\d])(?:${STATES}|${STATE_NAMES}|(?<=[,|;\t]["']?)[a-z]{2})${CELL})\d{5}(?:-\d{4})?(?![\w\-])`,
      "gu",
    ),
    veto: notStateCellZip,
  },
  {
    kind: "date",
    needs: "digit",
    pattern: rx(
      String.raw`(?<![\w./\-:])(?:${NUMERIC_DATES.join("|")})(?:T[\d:.]{5,12}(?:Z|[+\-]\d{2}:?\d{2})?)?(?![\w/\-]|\.\d)|\b(?:${[...MONTH_FIRST_DATES, ...DAY_FIRST_DATES].join("|")})|\b\d{1,2}-${MONTH}-\d{2,4}\b`,
      "g",
    ),
    veto: isSystemEventDate,
  },
  // A month and a day without a year ("6/18", "04/22"), where a date is being talked about: after
  // "on", "appt", "visit", "DOS", a procedure ("biopsy done 09/08"), "return by"… or in a list of
  // such dates. Bare, "24/7" or "3/4" are not dates.
  {
    kind: "date",
    needs: "digit",
    placeholders: true,
    pattern: rx(
      String.raw`${AT_DIGIT}(?:(?<=${DATE_CUE_BEFORE})(?:0?[1-9]|1[0-2])\/(?:0?[1-9]|[12]\d|3[01])(?![\w/\-]|\.\d|\s{1,2}(?:of|the|a|an|tabs?|tablets?|pills?|caps?|cups?|doses?|units?|mg|ml|strength|ratio|split|reminders?|tasks?|items?|steps?|tests?|done|sent|complete|passed|failed)\b)|(?<=\b(?:says|on|to|as|em|il|el|le|am)\s{1,2})(?:1[3-9]|2\d|3[01])\/(?:0?[1-9]|1[0-2])(?![\w/\-]|\.\d)|(?<=${DATE_CUE_BEFORE})(?:${YYYYMMDD}|\d{1,2}\.\d{1,2}\.\d{2})(?![\w/\-]|\.\d))`,
      "gi",
    ),
    veto: isSystemEventDate,
  },
  // A month and a day with a time of day: "Appt 12/02 at 8:00", "04/02 10:30", "VM 11/20 4:12pm"
  // (not a chat line's bracketed stamp, "[10/07 9:14]", nor a score, "pain 7/10 at 9:00"); and each
  // of three or more in a list ("2/3, 2/5, 2/7, 2/10"; not ratings out of one number, "3/5, 4/5, 5/5").
  {
    kind: "date",
    needs: "digit",
    pattern: rx(
      String.raw`${AT_DIGIT}(?<![\w/\-.[]|\[\s|\b(?:pain|scores?|scored|rated|rating|scale|level|grade|ratio)\s{1,2})${MONTH_DAY}(?=,?\s{1,2}(?:at\s{1,2})?(?:[01]?\d|2[0-3])(?::[0-5]\d(?:\s?[ap]\.?m\.?)?|\s?[ap]\.?m\.?)(?![\w:]))|${AT_DIGIT}(?<![\w/\-.])${MONTH_DAY}(?![\w/\-]|\.\d)(?:(?=(?:${LIST_JOIN}${MONTH_DAY}){2}(?![\w/\-]|\.\d))|(?<=${MONTH_DAY}${LIST_JOIN}${MONTH_DAY}${LIST_JOIN}${MONTH_DAY})|(?<=${MONTH_DAY}${LIST_JOIN}${MONTH_DAY})(?=${LIST_JOIN}${MONTH_DAY}(?![\w/\-]|\.\d)))`,
      "gi",
    ),
    veto: isRatingList,
  },
  // HL7 timestamps: "20240305081500" (a date and a time of day, 12 or 14 digits).
  {
    kind: "date",
    needs: "digit",
    pattern: rx(String.raw`(?<![\w\-.])${YYYYMMDD}(?:[01]\d|2[0-3])[0-5]\d(?:[0-5]\d)?(?![\w\-]|\.\d)`),
  },
  // Day, month and year in capitals: "19-JAN-2024", "03 FEB 2023".
  {
    kind: "date",
    needs: "digit",
    pattern: rx(
      String.raw`(?<![\w\-])\d{1,2}[\s\-](?:JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|SEPT|OCT|NOV|DEC)[\s\-](?:\d{4}|\d{2})(?![\w\-])`,
    ),
  },
  // A day and a month in capitals with no year, as bed boards print them: "02-MAR".
  {
    kind: "date",
    needs: "digit",
    pattern: rx(String.raw`(?<![\w\-])\d{1,2}-(?:JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC)(?![\w\-])`),
  },
  // iCalendar times: "20241203T150000".
  {
    kind: "date",
    needs: "digit",
    pattern: rx(String.raw`(?<![\w\-.])${YYYYMMDD}T\d{4,6}Z?(?![\w\-])`),
  },
  // Compact dates as feeds print them: "3Jan24", "19JAN2024".
  {
    kind: "date",
    needs: "digit",
    pattern: rx(
      String.raw`(?<![\w\-])\d{1,2}(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)(?:\d{2}|\d{4})(?![\w\-])`,
      "gi",
    ),
  },
  // A month in lower case and a day: "jan 19", "sept 3rd" ("may" is left out: it is mostly a verb).
  {
    kind: "date",
    needs: "monthWord",
    pattern: rx(
      String.raw`\b(?:jan|january|feb|february|mar|march|apr|april|june?|july?|aug|august|sept?|september|oct|october|nov|november|dec|december)\.?\s{1,2}(?:0?[1-9]|[12]\d|3[01])(?:st|nd|rd|th)?(?:,?\s{1,2}\d{4})?(?![\w:\-]|\.\d)`,
    ),
    veto: isSystemEventDate,
  },
];

/**
 * A number that restates one already redacted, as it came out of some tool ("[MRN]; the export
 * turns it into 71345", "[ZIP] as 7030"): the same identifier without its leading zeros.
 */
const echoDetectors: readonly Detector[] = (["ssn", "mrn", "zip", "member_id", "account"] as const).map((kind) => ({
  kind,
  needs: "digit",
  placeholders: true,
  pattern: rx(
    String.raw`${AT_DIGIT}(?<=\[${kind.toUpperCase()}\][^.\n]{0,48}\b(?:becomes|became|turns?(?:\s{1,2}it)?\s{1,2}into|turned(?:\s{1,2}it)?\s{1,2}into|shows?(?:\s{1,2}up)?\s{1,2}as|appears?\s{1,2}as|as|into|to)\s{1,2})\d{4,12}\b`,
    "gi",
  ),
}));

/**
 * Numbers that are identifiers only because the text says what kind of numbers it is talking
 * about ("the CSV column is named ssn and the values look like 423508817, 611442093"), the way
 * Presidio raises a pattern's score when a context word is near. Each runs only when its cue
 * appears somewhere in the text, and only on what no other detector claimed.
 */
const contextDetectors: ReadonlyArray<Detector & { cue: RegExp }> = [
  // A phone number in a country's own format, with its trunk 0, where the text speaks of phones:
  // "030 12345678", "098765 43210", "089 1234567-12", "044 668 18 00" (10 to 12 digits; the area
  // code set off by a space or a slash, so an NDC code, "0169-4060-12", is none).
  {
    kind: "phone",
    needs: "digit",
    cue: /\b(?:phones?|mobiles?|cell(?:phone)?s?|tel|telephone|whatsapp|sms|handy|telefon\w*|tel[eé]fonos?|m[oó]vil|celular|portable|landline|stacjonarny|numer\s+telefonu)\b/i,
    pattern: rx(
      String.raw`(?<![\w+.\-/])0[1-9]\d{1,4}[ /]\d{2,8}(?:[ \-]\d{2,4}){0,3}(?![\w.\-/]|\s{0,2}(?:%|ms|mg|kg|rows?|items?|patients?|days?)\b)`,
      "gi",
    ),
    keep: (value) => {
      const digits = value.replace(/\D/g, "").length;
      return digits >= 10 && digits <= 12 ? value.length : 0;
    },
  },
  {
    kind: "ssn",
    needs: "digit",
    cue: /(?<!\[)\b(?:ssns?|ss#|social security|social|soc\.? ?sec)\b(?!\])/i,
    pattern: rx(String.raw`(?<![\w.\-])\d{9}(?![\w\-]|\.\d)`),
  },
  {
    kind: "mrn",
    needs: "digit",
    cue: /(?<!\[)\b(?:mrns?|medical records?|record numbers?|charts?|chart numbers?|patient[ _-]?ids?|emr|ehr|hospital numbers?)\b(?!\])/i,
    pattern: rx(String.raw`(?<![\w.\-])\d{6,10}(?![\w\-]|\.\d)`),
    veto: (text, match) => isNpi(match[0], text),
  },
  {
    kind: "zip",
    needs: "digit",
    cue: /\b(?:zips?|zip ?codes?|postal|postcodes?)\b/i,
    pattern: rx(
      String.raw`(?<![\w.\-$])(?:\d{5}(?:-\d{4})?|\d{9})(?![\w\-]|\.\d|\s{0,2}(?:%|ms|mg|requests?|rows?|patients?|per\b))`,
    ),
    veto: (text, match) => CODE_LIST_BEFORE.test(text.slice(Math.max(0, match.index - 80), match.index)),
  },
  {
    kind: "age",
    needs: "digit",
    cue: /(?<!\[)\b(?:ages?|aged|years? old|year-old|y\/?o)\b(?!\])/i,
    // Not the end of a range ("0–120") or of an amount ("$44,120").
    pattern: rx(
      String.raw`(?<![\w.\-$–]|\d[,.])(?:9\d|1[0-2]\d)(?![\w\-]|[.,]\d|\s{0,2}(?:%|percent|ms|mg|kg|lbs?|days?|hours?|minutes?|mins?|seconds?|runs?|items?|requests?|rows?|patients?|people|messages?|tests?|cases?|per|req\w*|rps|qps|rpm|°))`,
    ),
  },
  {
    kind: "dob",
    needs: "digit",
    cue: /(?<!\[)\b(?:dob|date[ _]of[ _]birth|birth[ _]?dates?|birth[ _]years?|born)\b(?!\])/i,
    pattern: rx(String.raw`(?<![\w.\-/])(?:\d{1,2}\/)?(?:19\d\d|200\d)(?![\w\-/]|\.\d)`),
  },
  {
    // A birth date as HL7's PID-7 and X12's DMG carry it, eight digits, where the text speaks of one.
    kind: "dob",
    needs: "digit",
    cue: /(?<!\[)\b(?:dob|birth\w*|born|PID-7|DMG)\b(?!\])/i,
    pattern: rx(String.raw`(?<![\w.\-/])${YYYYMMDD}(?![\w\-/]|\.\d)`),
  },
];

/**
 * Characters read out one by one, as voice transcripts and slot fillers write them: "6 2 1 4 4 8
 * 0 9 3", "U 7 7 3 0 2 9 1 8 4". Builder text has no such runs, so one of five or more characters,
 * four of them digits, is an identifier; its kind comes from the nearest cue before it, else from
 * its length.
 */
const SPELLED_OUT = /(?<![\w\-.])[A-Za-z0-9](?:(?: ?[.\-–,])? [A-Za-z0-9]){4,19}(?![\w-]|\.\d)/g;
const SPELLED_CUES: ReadonlyArray<readonly [RegExp, IdentifierKind]> = [
  [/\b(?:ssn|ss|social|security)\b/gi, "ssn"],
  [/\b(?:zip|postal|post ?code)\b/gi, "zip"],
  [/\b(?:dob|birth|born)\b/gi, "dob"],
  [/\b(?:mrn|record|chart)\b/gi, "mrn"],
  [/\b(?:account|acct|claim|card number)\b/gi, "account"],
  [/\b(?:member|subscriber|policy|group|grp|medicare|medicaid|insurance|plan)\b/gi, "member_id"],
  [/\b(?:phone|number|call|cell|mobile|reach)\b/gi, "phone"],
];
const SPELLED_REACH = 80;

/** The kind the nearest of `cues` names in `before` (global patterns), if any names one: "ZIP? … my member id is" is a member id. */
function nearestCue(
  before: string,
  cues: ReadonlyArray<readonly [RegExp, IdentifierKind]>,
): IdentifierKind | undefined {
  let kind: IdentifierKind | undefined;
  let nearest = -1;
  for (const [cue, cueKind] of cues) {
    for (const hit of before.matchAll(cue)) {
      if (hit.index > nearest) {
        nearest = hit.index;
        kind = cueKind;
      }
    }
  }
  return kind;
}

function collectSpelledOut(text: string, found: Claim[]): void {
  SPELLED_OUT.lastIndex = 0;
  for (let match = SPELLED_OUT.exec(text); match !== null; match = SPELLED_OUT.exec(text)) {
    const characters = match[0].replace(/[\s.\-–,]/g, "");
    const digits = characters.replace(/\D/g, "").length;
    if (digits < 4) continue;
    const start = match.index;
    const end = start + match[0].length;
    if (overlaps(found, start, end)) continue;
    const before = text.slice(Math.max(0, start - SPELLED_REACH), start);
    const kind =
      nearestCue(before, SPELLED_CUES) ??
      (digits === 9 ? "ssn" : digits === 5 ? "zip" : digits === 10 ? "phone" : "member_id");
    found.push({ kind, start, end });
  }
}

// Safe Harbor's eighteenth kind, "any other unique identifying number" (`collectOpaque`).

/** A digit: where `collectOpaque` starts looking for a token. */
const OPAQUE_DIGIT = /\d/g;
/** Segments joined by single hyphens, at most six; a letter, and four digits. */
const OPAQUE_SHAPE = /^(?=[^a-z]*[a-z])(?=(?:\D*\d){4})[a-z0-9]+(?:-[a-z0-9]+){0,5}$/i;
/** What may stand before a token: not "_", nor a path's, an address's or a key's mark. */
const OPAQUE_BEFORE_OK = (code: number) => Number.isNaN(code) || !"_./@:#$%&=+\\".includes(String.fromCharCode(code));
const OPAQUE_NOT = [
  /^(?=.*[a-f])(?=.*\d)[0-9a-f]{7,40}$/, // a git hash (in capitals, hex is a serial's: 9F2204817731)
  /^\d+(?:ms|s|px|dpi|k|kb|mb|gb|tb|hz|khz|mhz|ghz|mg|mcg|ml|x\d+)$/i, // a quantity
  /^\d{3}[A-Z]\d{5}X$/i, // a provider taxonomy: 207Q00000X
  /^\d{6}X\d{3}[A-Z0-9]*$/i, // an X12 version: 005010X222A1
  /^20\d\d[A-Z]{1,2}$/i, // an X12 loop: 2010BA
  /^\d{5}-[A-Z0-9]{2}$/i, // a CPT code and its modifier: 20610-RT
  /^[A-Z]\d\d-[A-Z]\d\d$/i, // a range of ICD-10 codes: E00-E89
  /^[A-TV-Z]\d{2}[0-9A-Z]{1,4}$/i, // an ICD-10 code without its dot: S72001A
  /^0x[0-9a-f]+$/i, // a hexadecimal constant
  /^\d{3}-[A-Z]\d$/i, // an NCPDP field: 302-C2
  /^1Z[0-9A-Z]{16}$/i, // a UPS tracking number
  /^\d{5}[A-Z]{2}\d{7}(?:-\d{2})?$/i, // a marketplace plan (HIOS): 12345AZ0080001-01
  /^[HSR]\d{4}-\d{3}$/i, // a Medicare contract and plan: H5619-110
  /^[A-Z]-\d{1,5}$/i, // a row's own sequence: A-1001
  /^[A-Z]{2}\d{4}$/i, // a model number: BP7450
  /^[A-Z]{2,4}-[A-Z]?\d{3,4}[A-Z]{1,3}$/i, // a product's model: MFC-L2750DW
  /XX|xx|TEST|DEMO|SAMPLE|EXAMPLE/i, // a mask or a test value
  /^\d{4}-/, // a date or a year
  /^(?:FY|MY|CY|Q[1-4]|H[12])-?\d{4}$/i, // a fiscal or measurement year
  /^(?:MSG|ORD|FIL|SKU|LOT|CMS|UB|PR|MR|RX|REF|INV|ORDER|BUILD|REL|SUBNET|SG|VPC|I|AMI)[-_]?[0-9a-z]/i,
];
const OPAQUE_NOT_BEFORE =
  /\b(?:model|lot|sku|firmware|fw|version|ver|build|commit|sha|ticket|order|error|err|code|port|taxonomy|release|tag|pr|issue|item|part|ref|batch|catalog|cat|style|loop|segment|revision|rev|step|tracking|shipment|recall|po|advisory|awb|e\.g|example)s?\b\W{0,3}(?:\w+\W{1,2})?$/i;
/** A patient's record spoken of; not in an earlier pass's placeholder ("[MRN] … closed HLTH-2291"). */
const RECORD_CUE = /(?<!\[)\b(?:mrn|chart|record|paciente|patientin|dossier|expediente|prontu[aá]rio)\b(?!\])/gi;
/** How close before a ticket-shaped token a record must be spoken of for it to be the record's. */
const RECORD_REACH = 32;

/** The kind a cue before the token names; a record number when none does. */
const OPAQUE_CUES: ReadonlyArray<readonly [RegExp, IdentifierKind]> = [
  [/\b(?:plates?|vin|vehicle|car|truck|van|drove|parked)\b/gi, "vehicle"],
  [/\b(?:serials?|s\/n|sn|imei|udi|device|pump|meter|monitor|sensor|transmitter|inhaler|aids?)\b/gi, "device_id"],
  [/\b(?:licen[cs]es?|dl|dln|passport|dea|permit|certificate)\b/gi, "license"],
  [/\b(?:member|subscriber|policy|group|grp|plan|insurance|medicaid|medicare|cin|mbi)\b/gi, "member_id"],
  [/\b(?:account|acct|claim|invoice|statement|card|billing|garant|guarantor|fatura|factura|facture)\b/gi, "account"],
  [RECORD_CUE, "mrn"],
];

/**
 * A ticket's key ("HLTH-2291"), unless a car is spoken of (then it is a plate: "her car
 * BNK-4471") or, right before it, a patient's record ("el id del paciente PAC-44102", "chart
 * CHT-00271").
 */
const TICKET_KEY = /^[A-Z]{2,8}-\d{1,6}$/i;

function recordRightBefore(before: string): boolean {
  RECORD_CUE.lastIndex = 0;
  return RECORD_CUE.test(before.slice(-RECORD_REACH));
}

/** Whether a token's shape, the word before it or the message field it fills says it is a system's. */
function isSystemToken(value: string, kind: IdentifierKind | undefined, before: string, after: string): boolean {
  if (TICKET_KEY.test(value) && kind !== "vehicle" && !(kind === "mrn" && recordRightBefore(before))) return true;
  if (OPAQUE_NOT.some((shape) => shape.test(value)) || OPAQUE_NOT_BEFORE.test(before.slice(-24))) return true;
  // A field of an HL7 or X12 message is told by its segment, not by its shape.
  return /[|^~*]$/.test(before) || /^[|^~*]$/.test(after);
}

/** After a token: not glued to "_" or "@", nor running on past a ".", "/" or ":" ("v2.1", "a1b2c3/x"). */
function endsToken(text: string, end: number): boolean {
  const code = text.charCodeAt(end);
  if (code === 95 || code === 64) return false;
  return !((code === 46 || code === 47 || code === 58) && /\w/.test(text.charAt(end + 1)));
}

/**
 * A token of letters and at least four digits that no detector claimed ("KT48193Q",
 * "U8823-4401-97", "ANT-HMO-55928830") is someone's number, unless its shape or the word before it
 * says it is a system's (`isSystemToken`); its kind is the nearest cue's, else a record number. A
 * token with no letter is a count, a code or a time, left to the detectors that know what it is.
 * The tokens are found from their digits, most text having few: each run of letters, digits and
 * single inner hyphens holding a digit, 6 to 24 characters long, that is no part of a path, an
 * address, a key's value after "=" or ":", or a larger word.
 */
function collectOpaque(text: string, found: Claim[]): void {
  OPAQUE_DIGIT.lastIndex = 0;
  for (let digit = OPAQUE_DIGIT.exec(text); digit !== null; digit = OPAQUE_DIGIT.exec(text)) {
    let start = digit.index;
    while (start > 0 && isValueChar(text.charCodeAt(start - 1))) start--;
    let end = digit.index + 1;
    while (end < text.length && isValueChar(text.charCodeAt(end))) end++;
    OPAQUE_DIGIT.lastIndex = end;
    if (end - start < 6 || end - start > 24 || !OPAQUE_BEFORE_OK(text.charCodeAt(start - 1)) || !endsToken(text, end))
      continue;
    const value = text.slice(start, end);
    if (!OPAQUE_SHAPE.test(value) || overlaps(found, start, end)) continue;
    const before = text.slice(Math.max(0, start - SPELLED_REACH), start);
    const cue = nearestCue(before, OPAQUE_CUES);
    if (!isSystemToken(value, cue, before, text.charAt(end))) found.push({ kind: cue ?? "mrn", start, end });
  }
}

/** A date's shape: "3/7", "12.03.2024", "2024-03-07", "12th". */
const DATE_SHAPED = /^(?:\d{1,4}[/.-]\d{1,2}(?:[/.-]\d{2,4})?|\d{1,2}(?:st|nd|rd|th))$/;

/**
 * The number tagger's pass (`safety/number-tagger.ts`), run over the whole text once the rules
 * find nothing more: among the tokens with digits they left, those it takes for someone's, read
 * with the rules' placeholders in place ("[NAME] 0044-7712-9 [DATE]"). What a rule keeps (a
 * version, a code) it is not asked about. The kind is the nearest cue's, a date's by its shape,
 * else a record number.
 */
function findNumbers(text: string): IdentifierSpan[] {
  const tagger = numberTagger();
  if (tagger === null) return [];
  const spans: IdentifierSpan[] = [];
  for (const { start, end } of numberCandidates(text)) {
    // Two digits alone name no one's record or account ("MRN 20" is no record): only an age Safe Harbor names.
    if (end - start === 2 && text.slice(start, end) < "90") continue;
    if (!tagger.accepts(text, start, end)) continue;
    const value = text.slice(start, end);
    const cue = nearestCue(text.slice(Math.max(0, start - SPELLED_REACH), start), OPAQUE_CUES);
    const kind = cue ?? (DATE_SHAPED.test(value) ? "date" : "mrn");
    if (isDummy(kind, value) || (kind === "age" && isAgeThreshold(text, start, end))) continue;
    // Last, being the dearest: what a rule keeps is not the tagger's to take.
    if (!isProtected(text, start, end)) spans.push({ kind, start, end });
  }
  return spans;
}

/** A clock time with its seconds ("14:02:11"): what `PROTECTED_CLOCK` needs to find anything. */
function hasClockTime(text: string): boolean {
  return text.includes(":") && /\d:\d\d:\d\d/.test(text);
}

/** Whether what a rule keeps (a version, a clock time, a code) covers part of [start, end): read around it only. */
function isProtected(text: string, start: number, end: number): boolean {
  const from = Math.max(0, start - REACH);
  const around = text.slice(from, Math.min(text.length, end + REACH));
  const found: Claim[] = [];
  collectProtected(around, { clock: hasClockTime(around), rx: /rx/i.test(around) }, found);
  return overlaps(found, start - from, end - from);
}

// ---------------------------------------------------------------------------------------------
// Scanning.

function countOf(text: string, char: string, atLeast: number): boolean {
  let count = 0;
  for (let at = text.indexOf(char); at >= 0; at = text.indexOf(char, at + 1)) {
    if (++count >= atLeast) return true;
  }
  return false;
}

/** The words `DIGIT_WORD` reads. */
const DIGIT_WORDS = ["zero", "oh", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"];
/** Four and five in the languages of `DIGIT_WORD_ABROAD`: seven digits read out near always hold one (each word searched costs a pass over the text). */
const DIGIT_WORDS_ABROAD = ["cinco", "cuatro", "quatro", "quatre", "fünf"];

const SSN_WORDS = ["social", "ssn", "security"];
const BOT_WORDS = ["bot", "assistant", "persona", "agent", "avatar", "voice"];
/** What an age over 89 in words in another language holds: a number word, and the word for years. */
const AGE_WORDS_ABROAD = ["noventa", "cien", "cem", "cent", "quatre-vingt", "nonante", "neunzig", "hundert", "novanta"];
const YEARS_ABROAD = ["años", "anos", " ans", "jahre", "anni"];
const MONTH_STEMS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/** Whether `lower` holds `words` at least `count` times in all (inside other words too: an upper bound). */
function holdsAtLeast(lower: string, words: readonly string[], count: number): boolean {
  let seen = 0;
  for (const word of words) {
    for (let at = lower.indexOf(word); at >= 0; at = lower.indexOf(word, at + word.length)) {
      if (++seen >= count) return true;
    }
  }
  return false;
}

/**
 * What the text has that some detectors need, each found with one cheap search so that a text
 * without it skips their patterns (which cost far more than a search for a word): every fact is
 * true of every text one of its detectors can match. The words a pattern needs are read from its
 * source (`literal-floor.ts`, `grams`); a fact here says what a source cannot (seven number words,
 * a month beside an ordinal) or costs less than the table.
 */

/** What every masked card's number holds: four masking characters in a row. */
const MASK_RUN = /[xX*•●]{4}/;

function factsOf(text: string): Facts {
  const digits = digitsOf(text);
  // Case-blind facts read the lower-case text: one copy, then searches for plain words.
  const lower = text.toLowerCase();
  return {
    digit: digits.digits > 0,
    digits,
    grams: new TextGrams(lower.includes("ſ") ? literalText(text) : lower),
    at: text.includes("@"),
    web: text.includes("/") || lower.includes("www."),
    placeholder: text.includes("["),
    spelled: lower.includes("dot") && /[\s[(]dot[\s\])]/.test(lower) && /[\s[(]at[\s\])]/.test(lower),
    addressKey:
      (text.includes(":") || text.includes("=")) &&
      /[:=](?<=(?:city|town|street|addr|line[12]|house.?number|straat|huisnummer|plaats)\w*["']?\s{0,2}[:=])/i.test(
        text,
      ),
    ipv6: text.includes("::") || countOf(text, ":", 6),
    mac: countOf(text, ":", 5) || countOf(text, "-", 5),
    ssnWord: SSN_WORDS.some((word) => lower.includes(word)) || (lower.includes("ss") && /\bss\b/.test(lower)),
    monthWord: MONTH_STEMS.some((stem) => lower.includes(stem)),
    readDigits: holdsAtLeast(lower, DIGIT_WORDS, 7),
    readDigitsAbroad: holdsAtLeast(lower, DIGIT_WORDS_ABROAD, 1),
    ageWordAbroad:
      YEARS_ABROAD.some((word) => lower.includes(word)) && AGE_WORDS_ABROAD.some((word) => lower.includes(word)),
    a1c: lower.includes("a1c"),
    colon: text.includes(":"),
    masked: MASK_RUN.test(text),
    rx: lower.includes("rx"),
    clock: digits.run >= 2 && hasClockTime(text),
    named: text.includes("called") || text.includes("named"),
    bot: BOT_WORDS.some((word) => lower.includes(word)),
    gherkin: text.includes("Given") || text.includes("When") || text.includes("Then"),
    chat: text.includes("<") || text.includes("* ") || text.includes("-!-"),
  };
}

const NO_DIGITS: DigitFloor = { digits: 0, run: 0 };
const allDetectors: readonly Detector[] = [...earlyDetectors, ...detectors, ...echoDetectors, ...contextDetectors];
for (const detector of allDetectors) {
  detector.digits = digitFloor(detector.pattern.source);
  detector.literals = Literals.of(detector.pattern);
}

/** Every detector's pattern with the digits it was found to need, for the test that checks them. */
export function detectorDigitFloors(): ReadonlyArray<readonly [RegExp, DigitFloor]> {
  return allDetectors.map((detector) => [detector.pattern, detector.digits ?? NO_DIGITS] as const);
}

/** Every detector's pattern with the literals it was found to need, for the test that checks them. */
export function detectorLiteralFloors(): ReadonlyArray<readonly [RegExp, readonly string[] | null]> {
  return allDetectors.map((detector) => [detector.pattern, detector.literals?.words ?? null] as const);
}

function applies(detector: Detector, facts: Facts): boolean {
  const needed = detector.digits ?? NO_DIGITS;
  return (
    facts.digits.digits >= needed.digits &&
    facts.digits.run >= needed.run &&
    (detector.needs === "always" || facts[detector.needs]) &&
    facts.grams.mayHoldAny(detector.literals ?? null)
  );
}

/** The value of a match: its first participating group (which ends the match), else all of it. */
function matchedValue(match: RegExpExecArray): string {
  for (let i = 1; i < match.length; i++) {
    const group = match[i];
    if (group !== undefined) return group;
  }
  return match[0];
}

function overlaps(spans: readonly Claim[], start: number, end: number): boolean {
  // An indexed loop: name finding asks this for every candidate, against every claim of a long text.
  for (let i = 0; i < spans.length; i++) {
    const span = spans[i] as Claim;
    if (start < span.end && span.start < end) return true;
  }
  return false;
}

function collect(detector: Detector, text: string, found: Claim[]): void {
  const { pattern, kind, keep, veto, reach } = detector;
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    const value = matchedValue(match);
    const valueStart = match.index + match[0].length - value.length;
    const vetoed = veto?.(text, match) ?? false;
    if (vetoed === "keep" && !overlaps(found, valueStart, valueStart + value.length)) {
      found.push({ kind: KEEP, start: valueStart, end: valueStart + value.length });
      continue;
    }
    const length = vetoed ? 0 : keep ? keep(value) : value.length;
    const start = valueStart - (reach?.exec(text.slice(Math.max(0, valueStart - REACH), valueStart))?.[0].length ?? 0);
    if (length > 0 && !overlaps(found, Math.min(match.index, start), valueStart + length)) {
      found.push({ kind, start, end: valueStart + length });
    } else {
      // Its label may sit in text already claimed ("45 Elm Dr. Dr. Who"): look again just after.
      pattern.lastIndex = match.index + 1;
    }
  }
}

/**
 * What comes before the date of a system event, not of a person: a release, deploy, deprecation,
 * deadline, freeze, maintenance window, sprint ritual, holiday, certificate expiry or changelog
 * heading, then up to 40 characters in which nothing speaks of a person's care. Tested on the text
 * just before a date a detector found (`isSystemEventDate`), so it costs nothing where there is no date.
 */
const SYSTEM_EVENT_BEFORE =
  /(?:\b(?:releas(?:e[sd]?|ing)(?!\s{1,2}from)|deploy(?:s|ed|ing|ment)?|ship(?:s|ped|ping)?|merged|rolled\s{1,2}back|rollback|deprecat(?:e[sd]?|ing|ion)|sunset(?:s|ting)?|deadline|maintenance|code\s{1,2}freeze|freeze|froze|frozen|go[\s-]live|postmortem|post-mortem|outage|incident|downtime|migration|spec|contract|cutover|launch(?:e[sd]|ing)?|sprint|retro(?:spective)?|demo|stand-?up|kickoff|Thanksgiving|Christmas|New\s{1,2}Year['’]s|Easter|holidays?|closed|skips?|supersed(?:e[sd]?|ing)|(?:last\s{1,2})?modified|lastUpdated|notAfter|notBefore|LTS|EOL|build|d[ée]ploiement|mise\s{1,2}en\s{1,2}production|wartung\w*|zertifikat\w*|lanzamiento|despliegue|implanta[cç][aã]o|lan[cç]amento|manuten[cç][aã]o|(?:cert(?:ificate)?|TLS|SSL|token|domain|key|licen[cs]e)s?\b(?:[^.\n]|\.(?=\S)){0,40}?\b(?:expires?|expiry|expiration|renews?))\b|(?:^|:\s{0,2})#{1,6}\s{0,2}\[?v?\d{1,4}(?:\.\d{1,4}){1,3}\]?\s{0,2}[-–—])(?:(?!\b(?:visit|appt|appointment|admi\w*|discharg\w*|surgery|born|dob|birth\w*|seen|died|death|patient|pt|her|his|she|he)\b)(?:[^.\n;]|\.(?=\d))){0,40}?(?![\s\S])/im;

/** The list of slashed numbers around a position: "3/5, 4/5, 5/5". */
const SLASHED_LIST = /\d{1,2}\/\d{1,2}(?:(?:,\s{1,2}(?:and\s{1,2})?|\s{1,2}and\s{1,2})\d{1,2}\/\d{1,2})+/g;

/** A common fraction: "1/2", "3/4", "2/3". */
const isFraction = (value: string) => {
  const [top = 0, bottom = 0] = value.split("/").map(Number);
  return top < bottom && bottom <= 4;
};

/**
 * Ratings out of one number, "3/5, 4/5, 5/5", and fractions, "1/2, 1/4 and 3/4", not dates: the
 * list a match is in has one day for all, or only fractions; a fraction alone is one too.
 */
function isRatingList(text: string, match: RegExpExecArray): boolean {
  const from = Math.max(0, match.index - 60);
  const around = text.slice(from, match.index + 60);
  SLASHED_LIST.lastIndex = 0;
  for (let list = SLASHED_LIST.exec(around); list !== null; list = SLASHED_LIST.exec(around)) {
    const at = from + list.index;
    if (at <= match.index && match.index < at + list[0].length) {
      const items = list[0].match(/\d{1,2}\/\d{1,2}/g) ?? [];
      return new Set(items.map((item) => item.split("/")[1])).size === 1 || items.every(isFraction);
    }
  }
  return isFraction(match[0]);
}

/** A word of English or of the other languages the lists hold, which no login is taken for. */
function isWord(value: string): boolean {
  const { common, commonElsewhere, medical } = vocab();
  const folded = fold(value);
  return common.has(folded) || commonElsewhere.has(folded) || medical.has(folded);
}

/** The days of each month, February's in a leap year (no other year to know it by). */
const MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * A numeric date no calendar has: "2023-02-30", "2024-13-01". A validator's test value, nobody's
 * day, unless a birth is spoken of near it. Read as year, month and day when it starts with the
 * year, else as either month-day or day-month: impossible only if both are.
 */
function isImpossibleDate(value: string): boolean {
  const parts = value.match(/\d+/g);
  if (parts === null || parts.length < 3) return false;
  const [a, b, c] = parts.map(Number) as [number, number, number];
  const valid = (month: number, day: number) =>
    month >= 1 && month <= 12 && day >= 1 && day <= (MONTH_DAYS[month - 1] ?? 0);
  if ((parts[0] ?? "").length === 4) return !valid(b, c);
  return !valid(a, b) && !valid(b, a);
}

/** A birth spoken of near a date: then even an impossible one is someone's, mistyped ("DOB 1979-23-05"). */
const BIRTH_NEAR = /\b(?:dob|birth\w*|born|nacimiento|nascimento|naissance|geburt\w*)/i;

/**
 * A date some detector found that is no person's: an impossible one (left to the other
 * detectors), or one whose preceding words make it a system event's (kept as written).
 */
function isSystemEventDate(text: string, match: RegExpExecArray): "keep" | boolean {
  const value = matchedValue(match);
  const start = match.index + match[0].length - value.length;
  // No date, but maybe another number: "mrn formats: 00-44-1129" is a record's.
  if (isImpossibleDate(value) && !BIRTH_NEAR.test(text.slice(Math.max(0, start - 60), start + value.length + 60)))
    return true;
  return SYSTEM_EVENT_BEFORE.test(text.slice(Math.max(0, start - 120), start)) ? "keep" : false;
}

/** A log's own time of day on a date: "2025-11-24 05:42:17.331", "2026-04-09T08:14:22Z". */
const LOG_TIME = String.raw`\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?`;
/** A log record's key for its own time: `"ts": "`. */
const LOG_TIME_KEY = String.raw`"(?:ts|timestamp|@timestamp|time|logged_?at|log_?time)"\s{0,2}:\s{0,2}"`;
/**
 * A placeholder of someone's identifier on the same line, at most 200 characters away: a later
 * pass's window (`LATER_PASS_WINDOW`) around that placeholder always holds the time, so a second
 * redaction finds nothing the first did not.
 */
const PERSON_PLACEHOLDER = String.raw`\[(?:NAME|SSN|MRN|DOB|AGE|PHONE|FAX|EMAIL|ADDRESS|ZIP|MEMBER_ID|ACCOUNT|LICENSE|DEVICE_ID|VEHICLE)\]`;
const NO_PERSON_AHEAD = String.raw`(?![^\n]{0,200}${PERSON_PLACEHOLDER})`;
const NO_PERSON_BEHIND = String.raw`(?<!${PERSON_PLACEHOLDER}[^\n]{0,200})`;

/**
 * A log's own time on a line about someone: "2026-04-09T08:14:22Z WARN … patient=[MRN]" is when
 * something happened to that patient, a date Safe Harbor removes. The line's other identifiers are
 * placeholders by then, so it runs from the second pass on; a line about no one keeps its time.
 */
const PERSON_LOG_TIME: Detector = {
  kind: "date",
  needs: "placeholder",
  pattern: new RegExp(
    String.raw`(?:^\[?|${LOG_TIME_KEY})(?:(?=[^\n]{0,200}${PERSON_PLACEHOLDER})|(?<=${PERSON_PLACEHOLDER}[^\n]{0,200}))(${LOG_TIME})(?![\d:.])`,
    "gm",
  ),
};

/**
 * Look-alikes that must survive, claimed before any detector runs: a provider's NPI in code or
 * configuration (`"npi": "1234567893"`, `NPI_OVERRIDE=…`, X12's `XX*` qualifier) identifies a
 * clinician's practice, not a patient, and reads exactly like a phone number; an ICD-10 code
 * ("N18.3") reads like an id after a word such as "group".
 *
 * Only a value is claimed, never its label, so the patterns whose label is a list of words (no
 * word of which starts inside another) find the value and look behind it for the label: the
 * engine tries them only at digits instead of trying every word at every position (18× faster),
 * and the claims are the same.
 */
const PROTECTED = [
  /(?<![a-z])npi[\w.]*["']?\s{0,3}(?:={1,3}|:|is|#)?\s{0,3}["']?(\d{10})(?!\d)/gi,
  /\bXX\*(\d{10})(?!\d)/g,
  // ICD-10-CM codes with their dot ("N18.3", "E11.65"): diagnosis codes, not identifiers.
  /(?<![\w.])[A-TV-Z]\d[0-9A-Z]\.[0-9A-Z]{1,4}(?![\w.])/g,
  // A county's FIPS code ("County FIPS 55133"), five digits a ZIP's detectors would take.
  /\bFIPS(?:\s{1,2}(?:code|county))?\s{0,2}[:#=]?\s{0,2}(\d{5})(?!\d)/gi,
  // Procedure codes said to be codes ("CPT 80053", "a code like 36415"); the pharmacy routing
  // numbers on a card are `PROTECTED_RX`.
  /(?=\d)(?<=\b(?:(?:CPT|HCPCS)(?:\s{1,2}codes?)?|(?:procedure|billing|claim)\s{1,2}codes?|codes?\s{1,2}like)\s{0,3}[:#]?\s{0,2})(\d{5})(?!\d)/gi,
  // Thresholds: "ages over 100", "stops at 99", "everyone 90+" are bounds, not someone's age
  // ("00+!a@b.io", with an "@" in the same word, is the start of an email address).
  /(?=\d)(?:(?<=\b(?:over|under|above|below|older than|younger than|stops? at|up to|max(?:imum)?(?: of)?|caps? at|capped at|limit(?:ed)? to)\s{1,2})(\d{2,3})(?![\w\-@]|\.\w)|(?<![\w.+\-@])(\d{2,3})\+(?![\w@+-]|\.\w)(?!\S*@))/gi,
  // Versions said to be versions ("build 4.12.0.233", "version 10.0.19045"), which read like IP
  // addresses; not the start of an email address ("v0.0.0a.a@a.aa", a fast-check counterexample).
  /(?=\d)(?<=\b(?:version|ver\.?|build|release|runtime|firmware)\s{0,2}|\bv)(\d{1,5}(?:\.\d{1,6}){2,4})(?![\d.]|\S*@)/gi,
  // Values that stand for "unknown" in data (a ZIP of 00000 or 99999, a date of 1900-01-01 or
  // 9999-12-31; but right after a birth label a date is a birth date, and after an identifier's
  // label, the value is redacted whatever it is), and a number compared in
  // code ("age >= 90"): nobody's identifiers.
  /(?=\d)(?<![\w\-/.])(?<!\b(?:DOB|D\.O\.B\.?|date\s?of\s?birth|birth\s?date|born(?:\s(?:on|in))?|MRN|MR#|ID|member|account|acct|policy|claim|serial)[\s:="'#]{0,4})(00000|99999|1900-01-01|0001-01-01|9999-12-31|1899-12-30|0?1\/0?1\/1900)(?![\w\-/]|\.\d)/gi,
  /(?=[<>=!])(?<!<\/?[\w:-]{1,40})(?:[<>]=?|[=!]==?)\s{0,2}(\d{1,3})(?![\w.\-/:])(?!\S*@)/g,
  // A log line's or a log record's own time: "2025-11-24 05:42:17.331 INFO …", {"ts": "2025-11-23T22:01:55Z"},
  // "[2026-09-01 03:00:02] cron: …" (syslog's and git's: `PROTECTED_CLOCK`); not on a line about
  // someone, where it is the time of their event (`PERSON_LOG_TIME`).
  new RegExp(
    String.raw`^${NO_PERSON_AHEAD}(${LOG_TIME})(?=\s{1,3}\[?(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE|FATAL)\b)`,
    "gm",
  ),
  new RegExp(
    String.raw`${LOG_TIME_KEY}${NO_PERSON_AHEAD}${NO_PERSON_BEHIND}(\d{4}-\d{2}-\d{2}[ T][\d:.]{5,18}(?:Z|[+-]\d{2}:?\d{2})?)(?=")`,
    "g",
  ),
  new RegExp(String.raw`^\[${NO_PERSON_AHEAD}(${LOG_TIME})\]`, "gm"),
  // A system's own times after their keys: "last_sync=2026-02-11T03:00Z", "created_at 1767225600".
  /(?=\d)(?<=\b(?:last_?sync(?:ed)?(?:_?at)?|synced_?at|created_?at|updated_?at|modified_?at|deleted_?at|received_?at|sent_?at|expires_?at|logged_?at|timestamp)["']?\s{0,2}[=:]?\s{0,2}["']?|\bts["']?\s{0,2}[=:]\s{0,2}["']?)(\d{4}-\d{2}-\d{2}(?:[T ][\d:.]{2,15}(?:Z|[+-]\d{2}:?\d{2})?)?|\d{10}(?:\d{3})?)(?![\d-])/gi,
  // The bounds of a query, not anyone's date: "visit_date > '2025-01-01'", { $gt: ISODate("2026-01-01") }.
  /(?:[<>]=?|\$(?:gt|gte|lt|lte)["']?\s{0,2}:)\s{0,2}(?:ISODate\(|new\s{1,2}Date\()?\s{0,2}["']?(\d{4}-\d{2}-\d{2}(?:[T ][\d:.]{2,15}Z?)?)(?=["')\s;,]|$)/g,
  // Card processors' published test numbers: Stripe's and the networks' own.
  /\b(4111111111111111|4242424242424242|5555555555554444|2223003122003222|378282246310005|371449635398431|6011111111111117|3566002020360505)\b/g,
  // Payer ids, which are five digits like a ZIP: "payer id 60054", "60054 (Aetna)".
  /(?=\d)(?<=\bpayer[\s_-]{0,2}ids?\s{0,2}[:#=]?\s{0,2})(\d{5})(?!\d)/gi,
  /\b(\d{5})(?=\s{0,2}\((?:Aetna|Cigna|Humana|UHC|United(?:Healthcare)?|BCBS[\w-]*|Anthem|Medicare|Medicaid|Molina|Centene|Kaiser|Tricare|Ambetter|Optum|Availity)\))/g,
  // Vital signs and lab names that read like other things: "BP 182/110" (not an age), "A1C 9.1" (not a license).
  /\b(?:BP|blood\s{1,2}pressure)\s{0,3}[:=]?\s{0,2}(\d{2,3}\/\d{2,3})(?!\d)/gi,
];

/** Health systems and payers whose names read like people's, kept as written (core/safety/health-orgs.ts). */
const HEALTH_ORGS = new RegExp(
  `(?<![\\p{L}])(?:${[...HEALTH_ORGANIZATIONS]
    .sort((a, b) => b.length - a.length)
    .map((name) => RegExp.escape(name))
    .join("|")})(?![\\p{L}])`,
  "gu",
);

/** Spans claimed by `PROTECTED`: `overlaps` sees them, the result does not include them. */
const KEEP = "keep" as const;
type Claim = IdentifierSpan | { kind: typeof KEEP; start: number; end: number };

/**
 * Capitalised words that read like names and are not people (holidays, months, departments and
 * facilities, eponyms, states, teams, lab names), claimed as kept before any name is looked for.
 */
const MONTH_NAME = "(?:January|February|March|April|May|June|July|August|September|October|November|December)";
const DEPARTMENT =
  "(?:Cardiology|Orthopa?edics|Oncology|Radiology|Pediatrics|Paediatrics|Dermatology|Neurology|Urology|Nephrology|Gastroenterology|Pulmonology|Endocrinology|Rheumatology|Psychiatry|Ophthalmology|Obstetrics|Gynecology|Hematology|Pharmacy|Imaging|Laboratory|Pathology|Anesthesiology|Podiatry|Audiology|Optometry|Physical Therapy|Urgent Care|Primary Care|Family Medicine|Internal Medicine|Behavioral Health)";
const FACILITY = `(?:General|Hospitals?|Manor|Home|Clinic|Health|Med|Medical|Center|Centre|Labs?|Rehab|Hospice|Nursing|Care|Associates|Group|Dental|Ward|Wing|Pavilion|Elementary|School|Academy|College|University|Library|Church|Institute|${DEPARTMENT})`;
/** Words after an eponym: "Addison's disease", "Heimlich maneuver", "Glasgow Coma Scale". */
const EPONYM_OF = "(?:[Dd]isease|[Ss]yndrome|[Ss]ign|[Tt]riad|[Ll]aw|[Mm]ethod|[Tt]heorem|[Pp]rinciple)";
const EPONYM =
  "(?:[Mm]aneuver|[Mm]anoeuvre|[Tt]est|[Ss]mear|[Rr]eflex|[Pp]alsy|[Ss]cale|[Ss]core|[Cc]riteria|[Cc]lassification|[Tt]echnique|[Ss]tain|[Ss]arcoma|[Ll]ymphoma|[Uu]lcer|[Pp]osition|[Cc]atheter|[Ff]undoplication|[Pp]rocedure|[Oo]peration|[Ff]all [Ss]core|[Cc]alc|[Cc]alculation|[Cc]alculator|[Ee]quation|[Ff]ormula|[Rr]ules?|[Ii]ndex|[Ss]yndrome|[Ss]tage|[Ss]taging)";
const NUMBER_WORD = "(?:One|Two|Three|Four|Five|Six|Seven|Eight|Nine|Ten)";

/** Holidays ("no reminders on Thanksgiving and Christmas Day"). */
const HOLIDAYS =
  /(?=[A-Z])\b(?:Christmas(?:\s(?:Day|Eve))?|Thanksgiving(?:\sDay)?|New\sYear['’]s(?:\s(?:Day|Eve))?|Easter(?:\s(?:Sunday|Monday))?|Good\sFriday|Hanukkah|Kwanzaa|Diwali|Juneteenth|Labor\sDay|Memorial\sDay|Independence\sDay|Veterans\sDay|Presidents['’]?\sDay|Columbus\sDay|Boxing\sDay|MLK\sDay|Eid(?:\s(?:al-Fitr|al-Adha|ul-Fitr|ul-Adha|Mubarak))?|Lunar\sNew\sYear|Chinese\sNew\sYear|Rosh\sHashanah|Yom\sKippur|Passover|Ramadan|Nowruz|Vesak|Holi|Cinco\sde\sMayo|D[ií]a\sde\s(?:los\s)?Muertos|(?:Mother|Father|Valentine|Grandparents|St\.?\sPatrick)['’]?s\sDay|Halloween|Black\sFriday|Cyber\sMonday|Earth\sDay|Groundhog\sDay|April\sFools['’]?\sDay)\b/g;

/**
 * A month that is no one's name, one pattern for all its signs (each claims the month alone):
 * in a list of months ("every March, June and December"), after a word of time ("in June",
 * "since March", not "June's"), or naming a batch of work ("the April release", "The May
 * schedule is full"). Tried where a month's first letters are (`Facts`).
 */
const MONTHS_NOT_PEOPLE = new RegExp(
  `(?=[A-Z])(?:${[
    `\\b${MONTH_NAME}(?=(?:,\\s{1,2}|\\s{1,2}(?:and|or|to|through|until)\\s{1,2}|\\s{0,2}[–—-]\\s{0,2})${MONTH_NAME}\\b)`,
    `(?<=\\b${MONTH_NAME}(?:,\\s{1,2}(?:and\\s{1,2}|or\\s{1,2})?|\\s{1,2}(?:and|or|to|through|until)\\s{1,2}|\\s{0,2}[–—-]\\s{0,2}))${MONTH_NAME}\\b`,
    `(?<=\\b(?:in|since|until|till|during|through|throughout|early|late|mid|mid-|next|last|this|every|each)\\s{1,2})${MONTH_NAME}\\b(?!['’]s)`,
    `\\b${MONTH_NAME}(?=\\s{1,2}(?:release|schedule|sprint|cohort|deadline|newsletter|billing|cycle|reports?|batch|rollout|launch|update|build|invoices?|statements?|data|metrics|volume|campaign|roster|calendar)\\b)`,
  ].join("|")})`,
  "g",
);

const NOT_PEOPLE = [
  HOLIDAYS,
  // Eponyms: "Addison's disease", "Ménière's disease", "Heimlich maneuver", "Pap smear",
  // "Cockcroft-Gault equation", "Friedewald formula".
  new RegExp(
    `(?=\\p{Lu})\\p{Lu}\\p{Ll}+(?:-\\p{Lu}\\p{Ll}+)?(?:['’]s(?=\\s{1,2}${EPONYM_OF}\\b)|(?=\\s{1,2}(?:\\p{Lu}\\p{Ll}+\\s{1,2})?${EPONYM}\\b))`,
    "gu",
  ),
  // A US state where a place is meant: "lives in Georgia" (not "Georgia Mae", "Georgia's").
  new RegExp(
    `(?=[A-Z])(?<=\\b(?:in|from|to|across|throughout|near|outside|of)\\s{1,2})${STATE_NAMES}\\b(?!\\s{1,2}[A-Z])(?!['’]s)`,
    "g",
  ),
  // Job titles made of capitalised words: "Nurse Practitioner", "Care Coordinator", "Revenue Cycle Manager".
  /(?=[A-Z])\b(?:Nurse|Care|Charge|Case|Patient|Practice|Office|Clinical|Medical|Billing|Revenue\s{1,2}Cycle|Front\s{1,2}Desk)\s{1,2}(?:Practitioner|Manager|Navigator|Educator|Coordinator|Supervisor|Specialist|Assistant|Director|Lead)s?\b/g,
  // Conditions named after people, in the possessive ("Parkinson's", "Sjögren's") or alone where the
  // name is the condition's only use ("Tourette", "Marfan", "Guillain-Barré").
  /(?=[A-Z])(?:(?:Parkinson|Alzheimer|Crohn|Huntington|Hodgkin|Asperger|Tourette|Raynaud|Sj[öo]gren|Hashimoto|M[ée]ni[èe]re|Cushing|Addison|Graves)['’]s?(?![A-Za-zÀ-ÿ])|(?:Tourette|Marfan|Guillain-Barr[ée]|Alzheimer|Asperger)(?![A-Za-zÀ-ÿ]))/g,
  // Teams named like people: "Team Turing owns fax", "Team Falcon".
  /Team(?<=(?<!\w)Team)\s{1,2}[A-Z][a-z]+\b/g,
  // "grace period", in any case.
  /\b(?:Grace\s{1,2}[Pp]eriod|GRACE\s{1,2}PERIOD)\b/g,
  /(?=[A-Z])(?<=\b(?:the|our|a|to|in|on)\s{1,2})(?:[A-Z][a-z]{1,20}\s){0,2}[A-Z][A-Za-z]{1,20}(?=\s{1,2}(?:team|squad|crew|pod|guild|channel|queue|inbox|board|workspace|clinic|office|site|location|campus|branch|practice|pharmacy)s?\b)/g,
];

/** The lab test "A1c" ("HbA1c"), which reads like an id; not inside an email's local part ("a1c!.a@a.aa", a fast-check counterexample). */
const A1C = /(?<![\w:.-])(?:Hb)?A1c(?![\w:.-])(?![^\s@<>()[\]]{0,64}@)/gi;

/**
 * A department ("TO: Cardiology"), or a facility named by up to three capitalised words before
 * what it is ("Lakeside Orthopedics", "Mercy General", "St. Brigid's Children's Hospital"), on one
 * line; not a building in a street address ("1200 Hospital Way", "Two Penn Center"), nor where
 * the word after says it is someone's record, a label or a number ("John Smith Medical Record",
 * "Jane Doe Home: 555…"). The facility word is found first, then the words before it.
 */
const FACILITY_WORD = new RegExp(
  `(?=[A-Z])\\b(?:(${DEPARTMENT})|${FACILITY})\\b(?! (?:[Rr]ecords?|[Hh]istory|[Nn]umber|[Nn]o|[Ii][Dd]|[Bb]ill|[Pp]lan|[Ii]nsurance|[Ii]nfo(?:rmation)?|[Dd]ata|[Pp]hone|Way|St|Street|Rd|Road|Ave|Avenue|Dr|Drive|Blvd|Lane|Ln|Ct|Court|Pl|Place)\\b| {0,2}[:#]| {1,2}\\d)`,
  "g",
);
const FACILITY_NAME_BEFORE = new RegExp(
  `(?<!(?:\\d|\\b${NUMBER_WORD})\\s{1,2})\\b(?:(?!${NUMBER_WORD}\\b)[A-Z][a-z]+(?:['’]s)?\\.? ){1,3}(?![\\s\\S])`,
);

function collectFacilities(text: string, found: Claim[]): void {
  FACILITY_WORD.lastIndex = 0;
  for (let match = FACILITY_WORD.exec(text); match !== null; match = FACILITY_WORD.exec(text)) {
    const end = match.index + match[0].length;
    const from = Math.max(0, match.index - 80);
    const before = FACILITY_NAME_BEFORE.exec(text.slice(from, match.index));
    if (before !== null) found.push({ kind: KEEP, start: from + before.index, end });
    else if (match[1] !== undefined) found.push({ kind: KEEP, start: match.index, end });
  }
}

/**
 * A list of places after its label, to the end of the line or sentence: "clinics: Paris (TX),
 * Lebanon (NH), Warren, Houston", "sitios nuevos: San José, Santa Fe". Its capitalised words are
 * the places' names.
 */
const PLACE_LIST =
  /:(?<=\b(?:clinics|sites|locations|offices|cities|towns|regions|markets|sitios(?:\s{1,2}nuevos)?|ciudades|cl[ií]nicas|sedes)\s{0,2}:)([^\n.;—–]{1,200})/gi;
const PLACE_NAME = /\p{Lu}[\p{L}'’-]+(?:\s{1,2}\p{Lu}[\p{L}'’-]+){0,2}/gu;

function collectPlaceLists(text: string, found: Claim[]): void {
  PLACE_LIST.lastIndex = 0;
  for (let match = PLACE_LIST.exec(text); match !== null; match = PLACE_LIST.exec(text)) {
    const list = match[1] ?? "";
    const at = match.index + match[0].length - list.length;
    for (const place of list.matchAll(PLACE_NAME)) {
      found.push({ kind: KEEP, start: at + place.index, end: at + place.index + place[0].length });
    }
  }
}

/** The persona of a bot, named like a person: "our voice agent persona is called 'Ava'". Tried where "called" or "named" is (`Facts`). */
const PERSONA =
  /(?<=\b(?:persona|bot|assistant|agent|avatar|voice|kiosk|chatbot|app)\s{1,2}(?:is\s{1,2})?)(?:called|named)\s{1,2}['"“]?((?:(?:Dr|Nurse|Coach)\.?\s{1,2})?\p{Lu}\p{Ll}+)/gu;
/**
 * More ways builders name a bot's persona: "Ava the intake bot", "Clara (voice assistant)", "the
 * voice bot Clara answered", "rename the persona from Max to Nora", `persona: name: "Rosie"`,
 * "This is Sam, your virtual care assistant", "Nurse Nina" (bot), "Sam" is the name of our IVR bot. Tried where "bot", "assistant", "persona" (or the like) is; not a
 * medical or office assistant, who is a person.
 */
const PERSONAS = [
  /(?=\p{Lu})((?:(?:Dr|Nurse|Coach)\.?\s{1,2})?\p{Lu}\p{Ll}+)(?=["”]?\s{1,2}(?:\(\s{0,2}|the\s{1,2})(?:[\p{L}-]+\s{1,2}){0,2}(?:bot|chatbot|assistant|agent|persona)\b)/gu,
  /["“]((?:(?:Dr|Nurse|Coach)\.?\s{1,2})?\p{Lu}\p{Ll}+)(?=["”]\s{1,2}is\s{1,2}(?:the\s{1,2}name\s{1,2}of\s{1,2})?(?:our|the|a)\s{1,2}(?:[\p{L}-]+\s{1,2}){0,2}(?:bot|chatbot|assistant|agent|persona)\b)/gu,
  /(?=\p{Lu})(?<=(?<!(?:medical|nursing|physician|dental|office|clinical|administrative|executive|personal)\s{1,2})\b(?:bot|chatbot|assistant|persona)\s{1,2})(\p{Lu}\p{Ll}+)(?=\s{0,2}(?:\(|[,.!?]|\s(?:needs|should|answered|greeted|says|said|will|replies|replied|asks|asked)\b))/gu,
  /(?=\p{Lu})(?<=\bpersona\b[^\n]{0,40}?(?:\bto\s{1,2}|\bname\s{0,2}[:=]\s{0,2})["'“]?)(\p{Lu}\p{Ll}+)/gu,
  /(?=\p{Lu})(?<=\b(?:I['’]m|I\s{1,2}am|[Tt]his\s{1,2}is|[Ii]t['’]s)\s{1,2})(\p{Lu}\p{Ll}+)(?=,?\s{1,2}your\s{1,2}(?:virtual|digital|AI|automated|friendly)\b)/gu,
];
/**
 * What a thing is named, not a person: "variables named gauss, bayes and pearson", "a queue called
 * Hermes". Found from "named" or "called" (rare), then the thing before it; a list of up to ten.
 * Not a document's file name: "a file named CLM55012983_OKAFOR_EMEKA.x12" is named for a person.
 */
const THING_NAMED = new RegExp(
  String.raw`(?:named|called)(?<=\b(?:variables?|fields?|columns?|functions?|methods?|classes|class|tables?|files?|keys?|flags?|features?|queues?|topics?|channels?|branch(?:es)?|repos?|services?|endpoints?|bots?|agents?|loops?|workflows?|scripts?|jobs?|modules?|packages?|tests?|params?|parameters?|enums?|types?|models?|hosts?|servers?|databases?|buckets?|folders?|directories|directory|projects?|apps?|templates?|macros?|tags?|labels?|sheets?|tabs?)\s{1,2}(?:named|called))\s{1,2}(?!["'\x60]?[\p{L}\p{N}_.-]{1,120}\.(?:${DOCUMENT_EXTENSIONS}|xml|json|txt)(?![\p{L}\p{N}]))(["'\x60]?[\p{L}_][\p{L}\p{N}_.-]*["'\x60]?(?:,?\s{1,2}(?:(?:and|or)\s{1,2})?["'\x60]?[\p{L}_][\p{L}\p{N}_.-]*["'\x60]?){0,9})`,
  "gu",
);
/** A bot's name in configuration: `"bot_name": "Ava"`, `assistantName: 'Nora'`, `persona_name=Joy`. */
const BOT_NAME_KEY =
  /\b(?:bot|assistant|agent|persona|avatar|voice)[_-]?name["']?\s{0,2}[:=]\s{0,2}["'“]?(\p{Lu}\p{Ll}+)/giu;
/** Gherkin's steps at the start of a line: "Given a patient…", "Then Unsubscribe is sent". Tried where "Given", "When" or "Then" is. */
const GHERKIN = /^[ \t]{0,8}(?:Given|When|Then|And|But)\b(?=[ \t])/gm;

/**
 * The literals each pattern of what is kept needs (`literal-floor.ts`): these lists run on every
 * text, before any detector, and most texts hold none of their words.
 */
const KEPT_LITERALS = new Map<RegExp, Literals | null>();

/** Whether a pattern of what is kept may match a text of these pairs and triples (always, without them). */
function mayMatch(pattern: RegExp, grams: TextGrams | undefined): boolean {
  if (grams === undefined) return true;
  let literals = KEPT_LITERALS.get(pattern);
  if (literals === undefined) {
    literals = Literals.of(pattern);
    KEPT_LITERALS.set(pattern, literals);
  }
  return grams.mayHoldAny(literals);
}

/** The patterns of what is kept that are skipped by their literals, for the test that checks them. */
export function keptLiteralFloors(): ReadonlyArray<readonly [RegExp, readonly string[] | null]> {
  return [FACILITY_WORD, PLACE_LIST, HEALTH_ORGS, ...NOT_PEOPLE, ...PROTECTED].map(
    (pattern) => [pattern, Literals.of(pattern)?.words ?? null] as const,
  );
}

/** Claims as kept what reads like a person's name and is not: facilities, health systems, `NOT_PEOPLE`, "A1c". */
function collectNotPeople(text: string, facts: Facts, found: Claim[]): void {
  if (mayMatch(FACILITY_WORD, facts.grams)) collectFacilities(text, found);
  if (facts.colon && mayMatch(PLACE_LIST, facts.grams)) collectPlaceLists(text, found);
  HEALTH_ORGS.lastIndex = 0;
  for (
    let match = mayMatch(HEALTH_ORGS, facts.grams) ? HEALTH_ORGS.exec(text) : null;
    match !== null;
    match = HEALTH_ORGS.exec(text)
  ) {
    found.push({ kind: KEEP, start: match.index, end: match.index + match[0].length });
  }
  for (const pattern of NOT_PEOPLE) if (mayMatch(pattern, facts.grams)) claimNotPeople(pattern, text, found);
  if (facts.monthWord) claimNotPeople(MONTHS_NOT_PEOPLE, text, found);
  if (facts.a1c) claimNotPeople(A1C, text, found);
  if (facts.named) {
    claimNotPeople(PERSONA, text, found);
    claimNotPeople(THING_NAMED, text, found);
  }
  if (facts.bot) for (const pattern of PERSONAS) claimNotPeople(pattern, text, found);
  if (facts.bot && (text.includes("name") || text.includes("Name"))) claimNotPeople(BOT_NAME_KEY, text, found);
  if (facts.gherkin) claimNotPeople(GHERKIN, text, found);
}

/** Claims as kept each match of `pattern` (its first group, where it has one). */
function claimNotPeople(pattern: RegExp, text: string, found: Claim[]): void {
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    const value = match[1] ?? match[0];
    const start = match.index + match[0].indexOf(value);
    found.push({ kind: KEEP, start, end: start + value.length });
  }
}

/**
 * Times of a clock ("14:02:11") that logs print with their date: syslog's "Nov 24 14:02:11 host …",
 * git's "Date: Wed Jul 8 04:12:55 2026 +0000". Tried only on text with such a time.
 */
const PROTECTED_CLOCK = [
  /(?=[ADFJMNOS])(?<![^\n])((?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s{1,2}\d{1,2}\s\d{2}:\d{2}:\d{2})(?=\s[\w.-]+\s)/g,
  /(?=[MTWFS])\b((?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\s(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s{1,2}\d{1,2}\s\d{2}:\d{2}:\d{2}\s\d{4}\s[+-]\d{4})/g,
];
/** The pharmacy routing numbers on a card (RxBIN, RxPCN, RxGRP), which name a plan, not a person. Tried where "Rx" is, in any case. */
const PROTECTED_RX = /\bRx\s?(?:BIN|PCN|GRP|Group)\s{0,2}[:#]?\s{0,2}([A-Z0-9]{3,12})\b/gi;

function collectProtected(text: string, facts: Pick<Facts, "clock" | "rx"> & Partial<Facts>, found: Claim[]): void {
  for (const pattern of PROTECTED) if (mayMatch(pattern, facts.grams)) claimProtected(pattern, text, found);
  if (facts.clock) for (const pattern of PROTECTED_CLOCK) claimProtected(pattern, text, found);
  if (facts.rx) claimProtected(PROTECTED_RX, text, found);
  if (BUSINESS_WORD.test(text)) collectBusinessDocuments(text, found);
}

/** "invoice", "order", "PO", "RMA" and their kin: a business document's number may follow. */
const BUSINESS_WORD = /nvoice|NVOICE|actur|atura|echnung|rder|RDER|PO|RMA/;
/** An order, a purchase order, a return or an invoice (group 1), and its number (group 2). */
const BUSINESS_DOCUMENT =
  /\b(?:([Ii]nvoice|INVOICE|[Ff]acture|[Ff]actura|[Ff]atura|[Rr]echnung)|(?:[Pp]urchase\s{1,2})?[Oo]rder|ORDER|PO|RMA)\b\s{0,2}(?:#|[Nn]o\.?|[Nn]umber|[Nn]r\.?)?\s{0,2}[:#]?\s{0,2}((?=[A-Za-z0-9-]{0,30}\d(?:[A-Za-z-]{0,30}\d){2})[A-Za-z0-9][A-Za-z0-9-]{3,30})(?![\w@-]|[.:/][\w:]|\s{1,2}\d)/g;
/**
 * "200-200-0000", "123-45-6789", "2002000000": a phone or an SSN after "PO" is still one (ten digits
 * a North American number can be; a purchase order's "4500118273", whose exchange starts with 0,
 * cannot).
 */
const PHONE_OR_SSN = /^\d{3}-\d{2,3}-\d{4}$|^[2-9]\d{2}[2-9]\d{6}$/;
/** What says a sentence is about a patient's bill or order. */
const PATIENT_WORDS =
  /\b(?:patients?|pt|copay|co-pay|coinsurance|deductible|balance|statement|guarantor|member|mrs?|ms|miss|his|her|she|he|paciente|patiente?n?)\b|\[(?:NAME|MRN|ACCOUNT|MEMBER_ID|DOB|SSN)\]/i;
/** A person's name after "for": "invoice INV-88213 for Carlos Mendieta's ambulance ride". */
const FOR_SOMEONE = /\bfor\s{1,2}\p{Lu}\p{Ll}+(?:['’]s|\s{1,2}\p{Lu})/u;
/** What says an invoice is a vendor's: its sender, "our" bill, or a price list after it. */
const VENDOR_BEFORE =
  /\b(?:vendors?|suppliers?|fournisseur|proveedor|fornecedor|lieferant|our|saas|hosting|cloud|infra|subscription)\b/i;
const PRICES_AFTER = /^[^.!?\n]{0,60}?(?:[$€£]\s?\d|\bper\b|\bseats?\b)/;

/**
 * A business's own documents, not a patient's: an order, a purchase order or a return ("order
 * #A-55102 for 200 boxes of gloves", "PO 4500118273", "RMA RMA-2025-00412"), and an invoice a
 * vendor sent ("Approve vendor invoice AWS-4471190", "our Twilio invoice INV-2024-08817",
 * "invoice INV-0042: $1,200.00 setup, $0.015 per page"). Not in a sentence about a patient
 * ("Invoice INV-88120 for patient balance", "order 30041199 for Mrs. Diaz").
 */
function collectBusinessDocuments(text: string, found: Claim[]): void {
  BUSINESS_DOCUMENT.lastIndex = 0;
  for (let match = BUSINESS_DOCUMENT.exec(text); match !== null; match = BUSINESS_DOCUMENT.exec(text)) {
    const value = match[2] ?? "";
    const end = match.index + match[0].length;
    // A phone's or an SSN's shape is that, whatever word stands before it.
    if (PHONE_OR_SSN.test(value)) continue;
    // The words around it in its sentence: 50 characters before, 30 after.
    const lineStart = Math.max(0, match.index - 50, text.lastIndexOf("\n", match.index) + 1);
    const before = text.slice(lineStart, match.index).replace(/^.*[.!?]\s/s, "");
    const after = text.slice(end, end + 30).split(/[.!?\n](?:\s|$)/)[0] ?? "";
    const sentence = before + match[0] + after;
    if (PATIENT_WORDS.test(sentence) || FOR_SOMEONE.test(match[0] + after)) continue;
    if (match[1] !== undefined) {
      const word = /([\p{L}]+)\s{1,2}$/u.exec(before)?.[1];
      const vendor =
        VENDOR_BEFORE.test(before) ||
        PRICES_AFTER.test(text.slice(end, end + 80)) ||
        (word !== undefined && vocab().orgs.has(fold(word)));
      if (!vendor) continue;
    }
    found.push({ kind: KEEP, start: end - value.length, end });
  }
}

/** Claims as kept each match's value: its first or second group, where it has one, which ends the match. */
function claimProtected(pattern: RegExp, text: string, found: Claim[]): void {
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    const value = match[1] ?? match[2] ?? match[0];
    const end = match.index + match[0].length;
    found.push({ kind: KEEP, start: end - value.length, end });
  }
}

/** Every identifier in `text`, by position, never overlapping. */
export function findIdentifiers(text: string): IdentifierSpan[] {
  return scan(repairOcr(text), null);
}

/** A digit next to a letter OCR confuses with one: "O3/l2/2024", "(3O5) 555-Ol76". */
const OCR_SUSPECT = /\d[OolI]|[OolI]\d/;
/** A whole run of letters and digits with a digit in it: a run without one is never repaired. */
const ALNUM_RUN = /(?<![A-Za-z0-9])(?=[A-Za-z0-9]*\d)[A-Za-z0-9]+/g;

/**
 * Scanned faxes and cards come back with O for 0 and l or I for 1. In a run of digits and only
 * such letters, with no more letters than digits, the letters are read as the digits they stand
 * for, so the detectors see "03/12/2024". The repair keeps every offset (one character for one),
 * so spans found in it apply to the text as written. A letter and two digits ("I10", "O09.9") is an
 * ICD-10 code and stays.
 */
function repairOcr(text: string): string {
  if (!OCR_SUSPECT.test(text)) return text;
  return text.replace(ALNUM_RUN, (run) => {
    if (/^[A-Z]\d\d/.test(run)) return run;
    let digits = 0;
    let letters = 0;
    for (const char of run) {
      if (char >= "0" && char <= "9") digits++;
      else if ("OolI".includes(char)) letters++;
      else return run;
    }
    if (digits === 0 || letters === 0 || letters > digits) return run;
    return run.replace(/[Oo]/g, "0").replace(/[lI]/g, "1");
  });
}

/** A percent escape of a printable ASCII character: "%20", "%2F", "%40", "%2B". */
const PERCENT_ESCAPE = /%(2[0-9A-F]|[3-6][0-9A-F]|7[0-9A-E])/gi;
/** A form's or a query string's token: keys and values joined by "=" and "&", where "+" is a space and "&" ends a value. */
const FORM_TOKEN = /[^\s&=]+=[^\s&]*(?:&[^\s&=]+=[^\s&]*)+/g;

/** Whether `text` holds a percent escape `decodedView` decodes. */
function hasEscape(text: string): boolean {
  if (!text.includes("%")) return false;
  PERCENT_ESCAPE.lastIndex = 0;
  return PERCENT_ESCAPE.test(text);
}

/**
 * The text as a form or a URL means it: percent escapes decoded ("Ana%20Lima", "5%2F17",
 * "ana%40mail.com") and, in a form's or a query string's token, "+" and "&" read as spaces
 * ("Body=Hi+this+is+Maria", and no value runs into the next pair). `origin[i]` is where decoded character i starts in `text`, and
 * `origin[decoded.length]` is `text.length`, so a span found in the decoded text covers its
 * escapes in the text as written. Null when there is nothing to decode.
 */
function decodedView(text: string): { decoded: string; origin: number[] } | null {
  if (!hasEscape(text)) return null;
  const spaces = new Set<number>();
  FORM_TOKEN.lastIndex = 0;
  for (let match = FORM_TOKEN.exec(text); match !== null; match = FORM_TOKEN.exec(text)) {
    for (let k = 0; k < match[0].length; k++) {
      const char = match[0].charCodeAt(k);
      if (char === 43 || char === 38) spaces.add(match.index + k);
    }
  }
  let decoded = "";
  const origin: number[] = [];
  for (let k = 0; k < text.length; ) {
    origin.push(k);
    PERCENT_ESCAPE.lastIndex = k;
    const percent = text.charCodeAt(k) === 37 ? PERCENT_ESCAPE.exec(text) : null;
    if (percent !== null && percent.index === k) {
      decoded += String.fromCharCode(Number.parseInt(percent[1] ?? "20", 16));
      k += 3;
    } else {
      decoded += spaces.has(k) ? " " : text.charAt(k);
      k++;
    }
  }
  origin.push(text.length);
  return { decoded, origin };
}

/**
 * The first pass: the text as written, as a form or a URL decodes it (`decodedView`), where
 * "Ana%20Lima" is a name and "5%2F17" a date, and with numbers read out in digits (`spoken.ts`),
 * where "six oh six harmon avenue" is an address. What a view adds is mapped back onto the
 * characters that spell it.
 */
function scanWhole(text: string, spokenNumbers: boolean): IdentifierSpan[] {
  const spans = scan(repairOcr(text), null);
  const view = decodedView(text);
  const decoded = view === null ? spans : mergeView(text, spans, scan(repairOcr(view.decoded), null), view.origin);
  return spokenNumbers ? withSpoken(text, decoded) : decoded;
}

/**
 * `spans` and what the text's numbers read out add (`spoken.ts`): the view in digits is read
 * around each run only, a detector's reach either side (a long text with a few runs is not read
 * twice), and only a span that reads a run is new.
 */
function withSpoken(text: string, spans: IdentifierSpan[]): IdentifierSpan[] {
  const spoken = spokenView(text);
  if (spoken === null) return spans;
  const view = spoken.text;
  const found: IdentifierSpan[] = [];
  for (const [from, to] of windowsAround(view, spoken.runs, LATER_PASS_WINDOW)) {
    const opensMessage = from === 0 || view.charCodeAt(from - 1) === 10;
    for (const span of scan(view.slice(from, to), null, opensMessage)) {
      const start = span.start + from;
      const end = span.end + from;
      if (spoken.runs.some(([a, b]) => start < b && a < end)) found.push({ kind: span.kind, start, end });
    }
  }
  return mergeView(text, spans, found, spoken.origin);
}

/**
 * Spans found in a view of the text (decoded, or spoken numbers in digits) mapped back onto the
 * text through `origin` (where each view character starts in it). A view's span replaces what it
 * covers whole ("Ana" of "Ana%20Lima"); a span it only cuts into wins.
 */
function mergeView(
  text: string,
  spans: IdentifierSpan[],
  found: readonly IdentifierSpan[],
  origin: readonly number[],
): IdentifierSpan[] {
  let merged = spans;
  for (const span of found) {
    const start = origin[span.start] ?? 0;
    const end = origin[span.end] ?? text.length;
    const cut = merged.some(
      (other) => other.start < end && start < other.end && (other.start < start || other.end > end),
    );
    if (cut || end <= start) continue;
    merged = merged.filter((other) => !(other.start < end && start < other.end));
    merged.push({ kind: span.kind, start, end });
  }
  return merged === spans ? spans : merged.sort((a, b) => a.start - b.start);
}

/** How far around a placeholder a later pass looks for names: a cue's reach and then some. */
const PLACEHOLDER_WINDOW = 80;
/**
 * How far around a new placeholder a later pass looks at all: a detector that reads placeholders
 * reaches back at most `REACH` characters ("[ADDRESS], Boca Raton"); the rest reads as before.
 */
const LATER_PASS_WINDOW = REACH + 40;
/** How much further a later pass's window grows to begin and end with its line. */
const LINE_REACH = 160;
/** What a word is made of, for the ends of a window: letters, marks, digits, apostrophes, hyphens. */
const IN_WORD = /[\p{L}\p{M}\p{N}'’-]/u;

/**
 * The stretches of text around the placeholders the previous pass put in (`placed`, their starts
 * in order), merged where they overlap: after a pass, only there can a name have become
 * recognisable ("[NAME], Esperanza", "Haruto Sato ([DOB])"). Around an older placeholder the
 * text reads as the previous pass read it.
 */
function placeholderWindows(
  text: string,
  placed: readonly number[],
  reach = PLACEHOLDER_WINDOW,
  lineReach = 0,
): Array<readonly [number, number]> {
  return windowsAround(
    text,
    placed.map((start) => [start, text.indexOf("]", start) + 1] as const),
    reach,
    lineReach,
  );
}

/**
 * The stretches of `text` within `reach` of each of `ranges` (in order), merged where they
 * overlap, grown to whole words and, when `lineReach` is set, to whole lines that end that near.
 */
function windowsAround(
  text: string,
  ranges: ReadonlyArray<readonly [number, number]>,
  reach: number,
  lineReach = 0,
): Array<readonly [number, number]> {
  const windows: Array<[number, number]> = [];
  for (const [start, end] of ranges) {
    // Whole words at both ends: a word cut in two ("nam" of "name") can read as a name.
    let from = Math.max(0, start - reach);
    while (from > 0 && IN_WORD.test(text.charAt(from - 1))) from--;
    let to = Math.min(text.length, end + reach);
    while (to < text.length && IN_WORD.test(text.charAt(to))) to++;
    // Whole lines when they end near: patterns anchored at a line's start or end read it whole.
    if (lineReach > 0) {
      const lineStart = text.lastIndexOf("\n", from - 1) + 1;
      if (from - lineStart <= lineReach) from = lineStart;
      const lineEnd = text.indexOf("\n", to);
      if (lineEnd < 0 ? text.length - to <= lineReach : lineEnd - to <= lineReach)
        to = lineEnd < 0 ? text.length : lineEnd;
    }
    const last = windows[windows.length - 1];
    if (last !== undefined && from <= last[1]) last[1] = to;
    else windows.push([from, to]);
  }
  return windows;
}

/**
 * A later pass: only around the placeholders the previous one put in can anything have become
 * recognisable, so it scans those stretches of text, each on its own, and not the whole text again.
 */
function scanAround(text: string, placed: readonly number[]): IdentifierSpan[] {
  const spans: IdentifierSpan[] = [];
  let next = 0;
  for (const [from, to] of placeholderWindows(text, placed, LATER_PASS_WINDOW, LINE_REACH)) {
    const local: number[] = [];
    while (next < placed.length && (placed[next] as number) < to) local.push((placed[next++] as number) - from);
    const opensMessage = from === 0 || text.charCodeAt(from - 1) === 10;
    for (const span of scan(repairOcr(text.slice(from, to)), local, opensMessage)) {
      spans.push({ kind: span.kind, start: span.start + from, end: span.end + from });
    }
  }
  return spans;
}

/**
 * A town: up to three capitalised words, the first with small letters ("ANC" is a lab's), small
 * joining words between ("San Miguel de Allende").
 */
const TOWN = String.raw`\p{Lu}\p{Ll}[\p{L}'’.\-]{0,29}(?:\s{1,2}(?:(?:de|del|la|las|los|do|da|dos|das|di|du|des|sur|am|an|im|bei|upon|on)\s{1,2})?\p{Lu}[\p{L}'’.\-]{1,30}){0,2}`;

/**
 * The rest of a postal line after an address a detector found, up to its postal code and town:
 * "[ADDRESS], 2. OG links, 10969 Berlin", "…, Indiranagar, Bengaluru 560038". At most four
 * short parts of words and numbers between, on the same line; the postal code (four to six
 * digits, before or after the town) anchors it, so a sentence that goes on after an address is
 * not taken.
 */
const ADDRESS_TAIL = new RegExp(
  String.raw`^(?:[ \t]{1,2}[\p{L}\d.º#/\-]{1,12}(?:[ \t][\p{L}\d.º#/\-]{1,12})?)?(?:,\s{1,2}[\p{L}\d'’.ºª°/\- ]{1,40}?){0,4}?,\s{1,2}(?:\d{4,6}\s{1,2}(?:${TOWN}|\p{Lu}{3,6}\b)|${TOWN}\s{1,2}\d{4,6})(?![\p{L}\d])`,
  "u",
);

/**
 * What starts a postal line at the start of a line, a sentence or after a label, when no detector
 * knew its street: a flat, a house or a block and its number ("Flat 302", "H.No. 7-1-212/A",
 * "B-204"); then a comma, and `ADDRESS_TAIL` must follow.
 */
const POSTAL_LINE_HEAD =
  /(?=[A-Z])(?<=(?:^|[:\n]|\.[ \t]|["“(])[ \t]{0,3})(?:(?:Flat|Apt\.?|Apartment|Unit|(?:House|Hse|H\.?)\s?No\.?|Blk|Block|Plot|House|Hse|Casa|Door|Bldg|Suite|Sector)\s{0,2}[#.]?\s{0,2}[A-Z0-9][A-Z0-9/-]{0,9}|[A-Z]-\d{1,4})(?=,)/gm;

function collectAddressTails(text: string, found: Claim[]): void {
  POSTAL_LINE_HEAD.lastIndex = 0;
  for (let head = POSTAL_LINE_HEAD.exec(text); head !== null; head = POSTAL_LINE_HEAD.exec(text)) {
    const end = head.index + head[0].length;
    const tail = ADDRESS_TAIL.exec(text.slice(end, end + 200));
    if (tail !== null && !overlaps(found, head.index, end + tail[0].length)) {
      found.push({ kind: "address", start: head.index, end: end + tail[0].length });
    }
  }
  const claims = found.length;
  for (let i = 0; i < claims; i++) {
    const claim = found[i] as Claim;
    if (claim.kind !== "address") continue;
    const tail = ADDRESS_TAIL.exec(text.slice(claim.end, claim.end + 200));
    if (tail === null || overlaps(found, claim.end, claim.end + tail[0].length)) continue;
    const start = claim.end + tail[0].search(/[^,\s]/);
    found.push({ kind: "address", start, end: claim.end + tail[0].length });
  }
}

/** A date written without separators: "20261121". */
const COMPACT_DATE = new RegExp(`^${YYYYMMDD}$`);
/** A cell that is a number of a record: digits, with letters or a dash before them ("00123998", "TX-11827"). */
const ID_CELL = /^[ \t]*["']?((?:[A-Z]{1,4}[-_]?)?\d{6,12}|[A-Z]{1,4}-\d{5,10})["']?[ \t]*$/;
/** A cell already redacted as a person's: a name, a birth date or a date of their care, an SSN, an age, a contact. */
const PERSON_CELL = /\[(?:NAME|DOB|DATE|SSN|AGE|PHONE|EMAIL|ADDRESS|ZIP)\]/;
/** A header row (its cells bare words: the columns say what a cell is) or a segment of HL7 or X12. */
const NOT_A_BARE_ROW =
  /^[ \t]*(?:[A-Za-z_][\w ]{0,29}(?:[,\t|;][ \t]*[A-Za-z_][\w ]{0,29})+[ \t]*$|[A-Z][A-Z0-9]{2}[|*])/;

/**
 * The number in a row of delimited values whose other cells hold a person's identifier already
 * redacted ("00123998,[NAME],[NAME],F", "[NAME],[NAME],TX-11827", "900213\t[DATE]\tICU\tI50.9"):
 * a row about a person, with no header
 * to say what its number is, holds that person's record number. Not under a header (the columns
 * say what a cell is), not in an HL7 or X12 segment, and not a number of five digits or fewer
 * (a CPT code, a row's own id).
 */
function collectRowIds(text: string, found: Claim[]): void {
  let at = 0;
  let previous = "";
  for (const line of text.split("\n")) {
    const lineAt = at;
    at += line.length + 1;
    const above = previous;
    previous = line;
    if (!PERSON_CELL.test(line) || NOT_A_BARE_ROW.test(line) || NOT_A_BARE_ROW.test(above)) continue;
    const cells = [",", "\t", "|", ";"].map((separator) => line.split(separator)).find((split) => split.length >= 3);
    if (cells === undefined) continue;
    let cellAt = lineAt;
    for (const cell of cells) {
      const id = ID_CELL.exec(cell);
      if (id?.[1] !== undefined) {
        const start = cellAt + cell.indexOf(id[1]);
        const kind = COMPACT_DATE.test(id[1]) ? "date" : "mrn";
        if (!overlaps(found, start, start + id[1].length)) found.push({ kind, start, end: start + id[1].length });
      }
      cellAt += cell.length + 1;
    }
  }
}

/** Kinds whose values come in pairs and lists of one shape: "serials 2219K0457 & 2219K0458". */
const SIBLING_KINDS: ReadonlySet<string> = new Set(["device_id", "mrn", "member_id", "account", "license", "vehicle"]);
/** A list's joiner and the next value: "2219KX0441 L, right one is 2219KX0442". */
const SIBLING_AFTER =
  /^(?:[\s,;:&/()"']|\b(?:and|or|then|right|left|one|is|vs|L|R|into|to|with)\b){1,24}?((?=[A-Za-z-]*\d)[A-Za-z0-9][A-Za-z0-9-]{3,40})(?![\w-])/i;
const shapeOf = (value: string) => value.replace(/\d/g, "9").replace(/[A-Z]/g, "A").replace(/[a-z]/g, "a");

/**
 * The value right after an identifier of a listed kind, joined to it as a list joins values, with
 * exactly its shape (digits, capitals and small letters in the same places), is another of the same
 * kind: the second of a pair of hearing aids, the next record in a range, every value of a list.
 */
function collectSiblings(text: string, found: Claim[]): void {
  // A sibling found has its own next sibling: "AC-44120", "AC-44127", "AC-44135".
  for (let i = 0; i < found.length; i++) {
    const claim = found[i] as Claim;
    if (!SIBLING_KINDS.has(claim.kind)) continue;
    const value = text.slice(claim.start, claim.end);
    if (value.length < 5 || (value.match(/\d/g)?.length ?? 0) < 3) continue;
    const next = SIBLING_AFTER.exec(text.slice(claim.end, claim.end + 80));
    const sibling = next?.[1];
    if (next === null || sibling === undefined || shapeOf(sibling) !== shapeOf(value)) continue;
    const start = claim.end + next[0].length - sibling.length;
    if (!overlaps(found, start, start + sibling.length)) {
      found.push({ kind: claim.kind as IdentifierKind, start, end: start + sibling.length });
    }
  }
}

/**
 * One pass of the detectors. A later pass of `redact` (`placed` says where the previous pass put
 * placeholders) runs only what can find something new once placeholders are in the text: the
 * detectors that read placeholders, and names around the new placeholders (their cues and
 * neighbours include placeholders).
 */
function scan(text: string, placed: readonly number[] | null, opensMessage = true): IdentifierSpan[] {
  const afterPlaceholders = placed !== null;
  if (typeof text !== "string" || text.length === 0) return [];
  const facts = factsOf(text);
  const found: Claim[] = [];
  collectNotPeople(text, facts, found);
  if (facts.digit && facts.placeholder) collect(PERSON_LOG_TIME, text, found);
  if (facts.digit) collectProtected(text, facts, found);
  // A later pass keeps what a table's columns keep (a code column's cells), and finds nothing new in them.
  for (const span of findSegmentIdentifiers(text)) {
    if ((!afterPlaceholders || span.kind === KEEP) && !overlaps(found, span.start, span.end)) found.push(span);
  }
  if (!afterPlaceholders) {
    for (const detector of earlyDetectors) {
      if (applies(detector, facts)) collect(detector, text, found);
    }
    if (facts.digit) collectLabelled(text, found);
    if (facts.digit) collectSpelledOut(text, found);
  }
  for (const detector of detectors) {
    if ((!afterPlaceholders || detector.placeholders) && applies(detector, facts)) collect(detector, text, found);
  }
  // A placeholder can be the cue ("[ZIP] and 10030"), so these run in every pass.
  for (const detector of contextDetectors) {
    if (applies(detector, facts) && detector.cue.test(text)) collect(detector, text, found);
  }
  if (text.includes("]")) for (const detector of echoDetectors) collect(detector, text, found);
  if (!afterPlaceholders) collectSiblings(text, found);
  if (facts.digits.run >= 4) collectAddressTails(text, found);
  if (facts.digits.run >= 4 && facts.placeholder) collectRowIds(text, found);
  if (facts.digit) collectOpaque(text, found);
  const taken = (start: number, end: number) => overlaps(found, start, end);
  for (const [from, to] of placed !== null ? placeholderWindows(text, placed) : [[0, text.length] as const]) {
    const window = from === 0 && to === text.length ? text : text.slice(from, to);
    const shifted = (start: number, end: number) => taken(start + from, end + from);
    // The tagger runs in every pass: a placeholder beside a word changes its score, and a word it
    // takes only once a neighbour is redacted must be taken now, or redact(redact(x)) would differ.
    const opens = from === 0 ? opensMessage : text.charCodeAt(from - 1) === 10;
    for (const name of findNames(window, shifted, shifted, opens)) {
      found.push({ kind: "name", start: name.start + from, end: name.end + from });
    }
  }
  return found
    .filter(
      (span): span is IdentifierSpan =>
        span.kind !== KEEP &&
        !isDummy(span.kind, text.slice(span.start, span.end)) &&
        !(span.kind === "age" && isAgeThreshold(text, span.start, span.end)),
    )
    .sort((a, b) => a.start - b.start);
}

/**
 * An age that is a rule's bound, not a person's: "age > 120", "age >= 90", "90 and over", "90+",
 * "95 or older". Safe Harbor's own bucket ("90 or older") names no one. The ">" closing a tag
 * ("<age>94</age>") is no bound.
 */
function isAgeThreshold(text: string, start: number, end: number): boolean {
  return (
    /(?:[<≥≤]|(?<!<[\w:.-]{1,40})>)=?\s{0,2}$/.test(text.slice(Math.max(0, start - 45), start)) ||
    /^(?:\+|\s{1,2}(?:and|or)\s{1,2}(?:over|older|above|up|more)\b)/.test(text.slice(end, end + 12))
  );
}

/** A word no real name has, that builders put in made-up ones. */
const DUMMY_NAME_WORD = /(?<![\p{L}])(?:test|sample|example|fake|dummy|placeholder)(?![\p{L}])/iu;

/** A card's number masked but for its last four digits (`isDummy` keeps it an identifier). */
const MASKED_CARD = /^[xX*•●\s\d-]*[xX*•●]{4}[\s-]?\d{4}$/;
/** A test's value written as one: "TEST-MRN-0001", "XXX000000000", "fake", "sample", "pat-fixture-1", "mock-42". */
const TEST_VALUE = /TEST|DEMO|SAMPLE|EXAMPLE|FAKE|DUMMY|FIXTURE|MOCK|X{3}/i;

/**
 * A number no one has, that builders write in fixtures and docs: the same digit six times or
 * more ("00000000", "1111111"), a pair of digits repeated in a card's length ("4242 4242 4242
 * 4242", Stripe's test card), or a value that says it is a test's; a name only when a word of it
 * says so ("Alex Sample"). Not an email, a URL or an address, which have their own tests of what
 * is no one's. (Other made-up numbers, "5500 0000 0000 0004" or "01/01/01", are how writers make a
 * patient's up: they stay identifiers.)
 */
function isDummy(kind: IdentifierKind, value: string): boolean {
  // A name that says it is made up: "Alex Sample", "Pat Example", "Test Patient".
  if (kind === "name") return DUMMY_NAME_WORD.test(value);
  if (kind === "email" || kind === "url" || kind === "ip" || kind === "address") return false;
  // An address in a field of another kind ("^NET^[PHONE]^ama.k@example.com") is no test's, nor a
  // card masked to its last digits ("XXXXXXXXXXXX9921").
  if (TEST_VALUE.test(value) && !value.includes("@") && !MASKED_CARD.test(value)) return true;
  const digits = value.replace(/\D/g, "");
  return (digits.length >= 6 && /^(\d)\1+$/.test(digits)) || (digits.length >= 12 && /^(\d\d)\1+$/.test(digits));
}

export function containsIdentifiers(text: string): boolean {
  return findIdentifiers(text).length > 0;
}

/** The text with its spans replaced, and where each placeholder put in starts. */
export function replaceSpans(text: string, spans: readonly IdentifierSpan[]): { text: string; placed: number[] } {
  let out = "";
  let cursor = 0;
  const placed: number[] = [];
  for (const span of spans) {
    out += text.slice(cursor, span.start);
    placed.push(out.length);
    out += placeholder(span.kind);
    cursor = span.end;
  }
  return { text: out + text.slice(cursor), placed };
}

/** Passes after which redaction stops even if something still looks like an identifier. */
const MAX_PASSES = 6;

/** What may stand right before or after a value's other occurrence: no letter, digit or joiner. */
const NOT_IN_VALUE = /[\p{L}\p{N}_]/u;

/**
 * Whether a value, once found, is redacted wherever else it stands: one with digits ("000920114",
 * "3/7"), or an age or a date in words ("ninety-two", "the 7th of march"). Not a name (the name
 * finder has rules of its own for a name's other occurrences), nor words of an address ("Apto",
 * a city), nor an age in digits or a number of five digits or fewer, which recur by chance (a
 * year, a count, "the 100th request", a ZIP code that is also a CPT code).
 */
function echoes(kind: IdentifierKind, value: string): boolean {
  if (kind === "name" || value.length < 3 || /^\d{1,5}$/.test(value)) return false;
  const inWords = !/\d/.test(value) && /[\s-]/.test(value);
  if (kind === "age") return inWords;
  return /\d/.test(value) || ((kind === "date" || kind === "dob") && inWords);
}

/**
 * The spans a pass found, and every other occurrence of their values in the text: a value the
 * redactor found once is an identifier wherever it stands ("she's [AGE] … redact ninety-two",
 * "[MRN] … the wristband encodes 000920114"), though no detector would find it there alone.
 */
function withEchoes(text: string, spans: readonly IdentifierSpan[]): IdentifierSpan[] {
  const values = new Map<string, IdentifierKind>();
  for (const span of spans) {
    const value = text.slice(span.start, span.end).trim();
    if (echoes(span.kind, value) && !values.has(value)) values.set(value, span.kind);
  }
  if (values.size === 0) return spans as IdentifierSpan[];
  // What is claimed already, as a mask: a long text has hundreds of spans and of occurrences.
  const claimed = new Uint8Array(text.length);
  for (const span of spans) claimed.fill(1, span.start, span.end);
  const all = [...spans];
  const add = (kind: IdentifierKind, at: number, end: number) => {
    const before = text.charAt(at - 1);
    const after = text.charAt(end);
    if (NOT_IN_VALUE.test(before) || NOT_IN_VALUE.test(after) || (before === "[" && after === "]")) return;
    for (let k = at; k < end; k++) if (claimed[k] === 1) return;
    claimed.fill(1, at, end);
    all.push({ kind, start: at, end });
  };
  if (values.size <= 4) {
    for (const [value, kind] of values) {
      for (let at = text.indexOf(value); at >= 0; at = text.indexOf(value, at + 1)) add(kind, at, at + value.length);
    }
  } else {
    // Many values: one scan for all of them, the longest first where two start alike.
    const sorted = [...values.keys()].sort((x, y) => y.length - x.length);
    const any = new RegExp(sorted.map((value) => RegExp.escape(value)).join("|"), "g");
    for (const match of text.matchAll(any))
      add(values.get(match[0]) as IdentifierKind, match.index, match.index + match[0].length);
  }
  return all.length === spans.length ? all : all.sort((x, y) => x.start - y.start);
}

/**
 * Replaces every identifier with its placeholder. It repeats until a pass finds nothing, so
 * text that only becomes recognisable once a neighbour is replaced is caught too, and
 * `redact(redact(x)) === redact(x)`.
 */
export function redact(text: string): string {
  if (typeof text !== "string") return "";
  let current = text;
  let placed: number[] | null = null;
  // Numbers read out are read again in every pass, around their runs (`withSpoken`).
  const spokenNumbers = spokenView(text) !== null;
  const escaped = hasEscape(text);
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    // Escaped text is read whole in every pass: what a placeholder makes recognisable may be
    // spelled in escapes far from it, and reading it whole again is what a second redaction does.
    let spans =
      placed === null || escaped
        ? scanWhole(current, spokenNumbers)
        : spokenNumbers
          ? withSpoken(current, scanAround(current, placed))
          : scanAround(current, placed);
    // The rules are done: the number tagger reads what they left, and the rules look again around what it takes.
    if (spans.length === 0) spans = findNumbers(current);
    if (spans.length === 0) break;
    ({ text: current, placed } = replaceSpans(current, withEchoes(current, spans)));
  }
  return current;
}
