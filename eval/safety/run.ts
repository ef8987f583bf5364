/**
 * `npm run eval:safety`: measures the safety boundary on the labelled corpus, exactly as the
 * CLI and the server run it (`core/safety/inspect.ts`: classify the raw and the redacted
 * prompt, redact).
 *
 * Prints, for the held-back part (and with `--split train` or `--split all`, the others):
 * - the classifier's precision and recall per class, its recall per category and per form, how
 *   often a block names the right category, and every misclassified case;
 * - the redactor's recall per identifier kind, its keep rate, and every leak and every damaged
 *   keep string.
 * Exits 1 when a held-back figure is below its floor, or when the shipped model was not trained
 * on the current training corpus (`npm run train:safety` retrains it).
 *
 *   bun eval/safety/run.ts [--split heldout|train|all] [--quiet]
 *
 * `--quiet` (what `npm test`, and so CI, runs) prints the figures, the per-category and per-kind
 * tables and the counts of misses, never
 * the held-back cases themselves: reading them is studying them, and a set whose failures were
 * studied is retired into training (docs/safety.md). Without it, every miss is printed.
 */
import { readFileSync } from "node:fs";
import { redact } from "../../core/redact.ts";
import { inspectPrompt } from "../../core/safety/inspect.ts";
import { modelFileSchema, modelPath } from "../../core/safety/model.ts";
import { nameTagger } from "../../core/safety/name-tagger.ts";
import { numberTagger } from "../../core/safety/number-tagger.ts";
import * as v from "valibot";
import { type ClassifyCase, classifyCases, type RedactCase, redactCases, type Sourced, type Split } from "./corpus.ts";
import { currentVersion } from "./train.ts";
import { nameModelVersion } from "./train-names.ts";
import { numberModelVersion } from "./train-numbers.ts";

const figuresSchema = v.object({
  clinicalRecall: v.number(),
  builderPass: v.number(),
  identifierRecall: v.number(),
  keepCaseRate: v.number(),
});
type Figures = v.InferOutput<typeof figuresSchema>;

/**
 * `floors.json`: `targets` are the figures the boundary is meant to reach on the held-back part;
 * `enforced` are the ones it reached when the file was last updated, which this script (and so
 * `npm test`) refuses to fall below. Raise `enforced` as the figures improve; never lower it to
 * make a change pass.
 */
const floorsSchema = v.object({ targets: figuresSchema, enforced: figuresSchema });
const floorsPath = new URL("./floors.json", import.meta.url);

const pct = (hits: number, total: number) =>
  total === 0 ? "   -  " : `${((100 * hits) / total).toFixed(1)}%`.padStart(6);
const clip = (text: string, length = 150) => {
  const flat = text.replace(/\s+/g, " ");
  return flat.length > length ? `${flat.slice(0, length - 1)}…` : flat;
};

interface Tally {
  hits: number;
  total: number;
}

function tally(map: Map<string, Tally>, key: string, hit: boolean): void {
  const entry = map.get(key) ?? { hits: 0, total: 0 };
  entry.total++;
  if (hit) entry.hits++;
  map.set(key, entry);
}

function table(title: string, map: Map<string, Tally>): void {
  console.log(`  ${title}`);
  for (const [key, { hits, total }] of [...map].sort((a, b) => a[0].localeCompare(b[0]))) {
    console.log(`    ${key.padEnd(26)} ${pct(hits, total)}  ${String(hits).padStart(4)}/${total}`);
  }
}

export interface ClassifyReport {
  clinicalRecall: number;
  builderPass: number;
  clinicalPrecision: number;
  categoryAccuracy: number;
  cases: number;
}

export function evaluateClassifier(cases: readonly ClassifyCase[], quiet: boolean): ClassifyReport {
  const byCategory = new Map<string, Tally>();
  const byForm = new Map<string, Tally>();
  const misses: string[] = [];
  let tp = 0;
  let fn = 0;
  let fp = 0;
  let tn = 0;
  let categoryHits = 0;
  for (const c of cases) {
    const verdict = inspectPrompt(c.text);
    const blocked = verdict.intent === "clinical_blocked";
    const right = blocked === (c.label === "clinical");
    tally(byCategory, `${c.label}/${c.category}`, right);
    tally(byForm, `${c.label}/${c.form}`, right);
    if (c.label === "clinical") {
      if (blocked) tp++;
      else fn++;
      if (blocked && verdict.category === c.category) categoryHits++;
    } else if (blocked) fp++;
    else tn++;
    if (!right) {
      const said = blocked ? `blocked as ${verdict.category}` : `passed as ${verdict.intent}`;
      misses.push(`    ${c.id} ${c.label}/${c.category} (${c.form}), ${said}: ${clip(c.text)}`);
    }
  }
  const report = {
    clinicalRecall: tp / Math.max(1, tp + fn),
    builderPass: tn / Math.max(1, tn + fp),
    clinicalPrecision: tp / Math.max(1, tp + fp),
    categoryAccuracy: categoryHits / Math.max(1, tp),
    cases: cases.length,
  };
  console.log(`  Classifier: ${cases.length} cases (${tp + fn} clinical, ${tn + fp} builder)`);
  console.log(`    clinical: recall ${pct(tp, tp + fn)}  precision ${pct(tp, tp + fp)}`);
  console.log(`    builder:  recall ${pct(tn, tn + fp)} (builder pass)  precision ${pct(tn, tn + fn)}`);
  console.log(`    blocked_category right on ${pct(categoryHits, tp)} of blocked clinical cases`);
  table("per category (share classified right)", byCategory);
  table("per form (share classified right)", byForm);
  console.log(`  Misclassified: ${misses.length}`);
  if (!quiet) for (const line of misses) console.log(line);
  return report;
}

export interface RedactReport {
  identifierRecall: number;
  keepRate: number;
  keepCaseRate: number;
  identifiers: number;
}

/** Titles and credentials of three letters or more, written before or after a name. */
const TITLES = new Set([
  "mrs",
  "miss",
  "prof",
  "sra",
  "srta",
  "nurse",
  "pac",
  "lpn",
  "lvn",
  "cna",
  "crna",
  "fnp",
  "dnp",
  "phd",
  "msn",
  "mph",
]);

/**
 * Whether one identifier survived: its text, or any of its significant parts, is still there. A
 * word of a name inside one of the case's keep strings is no leak: "Jordan Adebayo" and "the
 * Jordan clinic" in one case ask for "Jordan" to go and to stay, and the keep string says which.
 */
export function leaked(
  output: string,
  kind: RedactCase["identifiers"][number]["kind"],
  value: string,
  keep: readonly string[] = [],
): boolean {
  if (kind === "name") {
    let rest = output;
    for (const kept of keep) rest = rest.replaceAll(kept, " ");
    if (rest.includes(value)) return true;
    // Every word of a name is identifying on its own ("[NAME] Doe" still leaks Doe); a title or a
    // credential a writer labelled with it ("Mrs. Kovacs", "PA-C Oksana …") identifies no one.
    return value
      .split(/[\s,]+/)
      .filter((word) => /^\p{Lu}/u.test(word) && word.replace(/[^\p{L}]/gu, "").length >= 3)
      .filter((word) => !TITLES.has(word.replace(/[^\p{L}]/gu, "").toLowerCase()))
      .some((word) => new RegExp(`(?<![\\p{L}])${RegExp.escape(word)}(?![\\p{L}])`, "u").test(rest));
  }
  if (output.includes(value)) return true;
  // Runs of three or more digits carry most of a number; a year on its own may stay (Safe Harbor).
  const runs = value.match(/\d{3,}/g) ?? [];
  return runs
    .filter((run) => !((kind === "date" || kind === "dob") && /^(?:19|20)\d\d$/.test(run)))
    .some((run) => new RegExp(`(?<!\\d)${run}(?!\\d)`).test(output));
}

export function evaluateRedactor(cases: ReadonlyArray<Sourced<RedactCase>>, quiet: boolean): RedactReport {
  const byKind = new Map<string, Tally>();
  // Per file (one writer's set each): identifiers found, and keep cases wholly kept.
  const bySet = new Map<string, { found: Tally; kept: Tally }>();
  const keepByCategory = new Map<string, Tally>();
  const leaks: string[] = [];
  const damaged: string[] = [];
  let caught = 0;
  let identifiers = 0;
  let kept = 0;
  let keeps = 0;
  let keepCasesKept = 0;
  let keepCases = 0;
  for (const c of cases) {
    const output = redact(c.text);
    let set = bySet.get(c.source);
    if (set === undefined) {
      set = { found: { hits: 0, total: 0 }, kept: { hits: 0, total: 0 } };
      bySet.set(c.source, set);
    }
    for (const identifier of c.identifiers) {
      const leak = leaked(output, identifier.kind, identifier.value, c.keep);
      identifiers++;
      if (!leak) caught++;
      set.found.total++;
      if (!leak) set.found.hits++;
      tally(byKind, identifier.kind, !leak);
      if (leak) leaks.push(`    ${c.id} ${identifier.kind} "${identifier.value}": ${clip(output)}`);
    }
    const intact = c.keep.filter((k) => output.includes(k));
    keeps += c.keep.length;
    kept += intact.length;
    if (c.identifiers.length === 0) {
      keepCases++;
      const whole = intact.length === c.keep.length;
      if (whole) keepCasesKept++;
      set.kept.total++;
      if (whole) set.kept.hits++;
      tally(keepByCategory, c.category.replace(/^keep_/, ""), whole);
    }
    for (const k of c.keep) if (!output.includes(k)) damaged.push(`    ${c.id} "${k}": ${clip(output)}`);
  }
  console.log(`  Redactor: ${identifiers} identifiers in ${cases.length - keepCases} cases, ${keepCases} keep cases`);
  console.log(`    identifier recall ${pct(caught, identifiers)}   keep strings intact ${pct(kept, keeps)}`);
  console.log(`    keep cases wholly kept ${pct(keepCasesKept, keepCases)}`);
  if (bySet.size > 1) {
    for (const [source, { found, kept: whole }] of bySet) {
      console.log(
        `    ${source.padEnd(24)} identifiers ${pct(found.hits, found.total)} ${`${found.hits}/${found.total}`.padStart(9)}   keep cases ${pct(whole.hits, whole.total)} ${`${whole.hits}/${whole.total}`.padStart(7)}`,
      );
    }
  }
  table("recall per identifier kind", byKind);
  table("keep cases wholly kept, per category", keepByCategory);
  console.log(`  Leaked identifiers: ${leaks.length}`);
  if (!quiet) for (const line of leaks) console.log(line);
  console.log(`  Damaged keep strings: ${damaged.length}`);
  if (!quiet) for (const line of damaged) console.log(line);
  return {
    identifierRecall: caught / Math.max(1, identifiers),
    keepRate: kept / Math.max(1, keeps),
    keepCaseRate: keepCasesKept / Math.max(1, keepCases),
    identifiers,
  };
}

function main(): number {
  const splitArg = process.argv.includes("--split") ? process.argv[process.argv.indexOf("--split") + 1] : "heldout";
  const quiet = process.argv.includes("--quiet");
  const splits: Split[] = splitArg === "all" ? ["train", "heldout"] : splitArg === "train" ? ["train"] : ["heldout"];
  let failed = false;

  const model = v.parse(modelFileSchema, JSON.parse(readFileSync(modelPath, "utf8")));
  const expected = currentVersion();
  console.log(`Safety model ${model.version}, trained on ${model.trainedOn.cases} cases`);
  if (model.version !== expected) {
    console.log(`  ✖ stale: the training corpus or features changed (expected ${expected}); run npm run train:safety`);
    failed = true;
  }
  const tagger = nameTagger();
  const expectedTagger = nameModelVersion();
  console.log(`Name tagger ${tagger?.file.version ?? "missing"}`);
  if (tagger?.file.version !== expectedTagger) {
    console.log(
      `  ✖ stale: the redaction corpus or the tagger changed (expected ${expectedTagger}); run npm run train:safety`,
    );
    failed = true;
  }
  const numbers = numberTagger();
  const expectedNumbers = numberModelVersion();
  console.log(`Number tagger ${numbers?.file.version ?? "missing"}`);
  if (numbers?.file.version !== expectedNumbers) {
    console.log(
      `  ✖ stale: the redaction corpus, the rules or the name tagger changed (expected ${expectedNumbers}); run npm run train:safety`,
    );
    failed = true;
  }

  for (const split of splits) {
    console.log(`\n== ${split} ==`);
    const classifier = evaluateClassifier(classifyCases(split), quiet);
    const redactor = evaluateRedactor(redactCases(split), quiet);
    if (split !== "heldout") continue;
    const measured: Figures = {
      clinicalRecall: classifier.clinicalRecall,
      builderPass: classifier.builderPass,
      identifierRecall: redactor.identifierRecall,
      keepCaseRate: redactor.keepCaseRate,
    };
    const { targets, enforced } = v.parse(floorsSchema, JSON.parse(readFileSync(floorsPath, "utf8")));
    console.log("\n  Held-back figures        measured   enforced (CI)   target");
    for (const key of Object.keys(measured) as Array<keyof Figures>) {
      const value = measured[key];
      const held = value + 1e-9 >= enforced[key];
      if (!held) failed = true;
      const reached = value + 1e-9 >= targets[key] ? "reached" : "not yet";
      const percent = (x: number) => `${(100 * x).toFixed(1)}%`.padStart(7);
      console.log(
        `    ${held ? "✔" : "✖"} ${key.padEnd(20)} ${percent(value)}   ${percent(enforced[key])}        ${percent(targets[key])} (${reached})`,
      );
    }
  }
  return failed ? 1 : 0;
}

if (import.meta.main) process.exit(main());
