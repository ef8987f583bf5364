/**
 * The vocabularies of the safety model, loaded once from `vocab.json` (built by
 * `eval/safety/vocab.ts` from maintained npm packages; see there for what each set holds).
 * Words are looked up folded (`fold.ts`): lower case, no accents.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as v from "valibot";
import { Bloom } from "./bloom.ts";

export const vocabPath = fileURLToPath(new URL("./vocab.json", import.meta.url));

const setSchema = v.object({ bits: v.string(), count: v.number() });

export const vocabFileSchema = v.object({
  format: v.literal(1),
  sources: v.array(v.string()),
  sets: v.object({
    medical: setSchema,
    names: setSchema,
    common: setSchema,
    commonElsewhere: setSchema,
    orgs: setSchema,
    places: setSchema,
    words: setSchema,
  }),
});
export type VocabFile = v.InferOutput<typeof vocabFileSchema>;

export interface Vocab {
  /** Medical terms and drug names that are not common English words. */
  medical: Bloom;
  /** Human names of many cultures, first and last. */
  names: Bloom;
  /** The ~10,000 most common English words. */
  common: Bloom;
  /**
   * The most common Spanish and Portuguese words that are no name given in those languages or in
   * English: in lower case, "sola" or "casa" in a patient's message is a word, though a list of
   * surnames holds it.
   */
  commonElsewhere: Bloom;
  /** Company, product and software names. */
  orgs: Bloom;
  /** US states, US cities, countries. */
  places: Bloom;
  /** Every English word a large dictionary holds, and every software term: what no login is. */
  words: Bloom;
}

function load(): Vocab {
  const file = v.parse(vocabFileSchema, JSON.parse(readFileSync(vocabPath, "utf8")));
  const bloom = (set: { bits: string }) => new Bloom(new Uint8Array(Buffer.from(set.bits, "base64")));
  const { medical, names, common, commonElsewhere, orgs, places, words } = file.sets;
  return {
    medical: bloom(medical),
    names: bloom(names),
    common: bloom(common),
    commonElsewhere: bloom(commonElsewhere),
    orgs: bloom(orgs),
    places: bloom(places),
    words: bloom(words),
  };
}

let loaded: Vocab | undefined;

export function vocab(): Vocab {
  loaded ??= load();
  return loaded;
}
