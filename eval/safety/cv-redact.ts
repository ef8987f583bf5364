/**
 * The whole redactor measured with one writer's file held out at a time: for each training file
 * of `eval/safety/train/redact*.jsonl`, the name tagger is trained on the other writers' files
 * (its threshold chosen by cross-validation among them, as `train-names.ts` does), then that
 * writer's cases are redacted. This is the honest stand-in for a writer nobody tuned on, for the
 * learned part (the rules were written with every training file in view, so the rule-only kinds
 * read higher here than on a fresh writer). The held-back part is never read.
 *
 *   bun eval/safety/cv-redact.ts                 per-kind recall, keep rate, words wrongly redacted
 *   bun eval/safety/cv-redact.ts --no-tagger     the same without the name tagger
 *   bun eval/safety/cv-redact.ts --no-number-tagger   the same without the number tagger
 *   bun eval/safety/cv-redact.ts --shipped FILE  the shipped redactor on one case file, no training
 *   bun eval/safety/cv-redact.ts --misses KIND   also print every leaked identifier of that kind ("keep":
 *                                                every damaged keep string; "all": both, every kind)
 *   bun eval/safety/cv-redact.ts --only r10      hold out only the writers whose file name holds "r10"
 *                                                (each still measured with every other writer trained on)
 */
import { readFileSync } from "node:fs";
import * as v from "valibot";
import { redact } from "../../core/redact.ts";
import { useNameTagger } from "../../core/safety/name-tagger.ts";
import { useNumberTagger } from "../../core/safety/number-tagger.ts";
import { type RedactCase, redactCaseSchema, redactCases, type Sourced } from "./corpus.ts";
import { leaked } from "./run.ts";
import { examplesOf, taggerFrom } from "./train-names.ts";
import { numberExamplesOf, numberTaggerFrom } from "./train-numbers.ts";

interface Tally {
  hits: number;
  total: number;
}

interface Totals {
  byKind: Map<string, Tally>;
  keepCases: Tally;
  keepStrings: Tally;
  /** Words outside every identifier, and how many of them the redactor took. */
  words: Tally;
  capitalised: Tally;
  misses: string[];
}

const WORD = /\p{L}[\p{L}\p{M}'’-]*/gu;

function emptyTotals(): Totals {
  return {
    byKind: new Map(),
    keepCases: { hits: 0, total: 0 },
    keepStrings: { hits: 0, total: 0 },
    words: { hits: 0, total: 0 },
    capitalised: { hits: 0, total: 0 },
    misses: [],
  };
}

function countWord(text: string, word: string): number {
  return text.match(new RegExp(`(?<![\\p{L}\\p{M}'’-])${RegExp.escape(word)}(?![\\p{L}\\p{M}'’-])`, "gu"))?.length ?? 0;
}

/** Redacts each case and adds what happened to `totals`. */
function measure(cases: readonly RedactCase[], totals: Totals, missKind: string | undefined): void {
  for (const c of cases) {
    const output = redact(c.text);
    for (const identifier of c.identifiers) {
      const leak = leaked(output, identifier.kind, identifier.value, c.keep);
      const entry = totals.byKind.get(identifier.kind) ?? { hits: 0, total: 0 };
      entry.total++;
      if (!leak) entry.hits++;
      totals.byKind.set(identifier.kind, entry);
      if (leak && (identifier.kind === missKind || missKind === "all"))
        totals.misses.push(`  ${c.id} ${identifier.kind} "${identifier.value}": ${output}`);
    }
    const intact = c.keep.filter((k) => output.includes(k)).length;
    if (missKind === "keep" || missKind === "all") {
      for (const k of c.keep) if (!output.includes(k)) totals.misses.push(`  ${c.id} keep "${k}": ${output}`);
    }
    totals.keepStrings.total += c.keep.length;
    totals.keepStrings.hits += intact;
    if (c.identifiers.length === 0) {
      totals.keepCases.total++;
      if (intact === c.keep.length) totals.keepCases.hits++;
    }
    // Words outside every identifier: those missing from the output were taken for one.
    const ranges: Array<[number, number]> = [];
    for (const { value } of c.identifiers) {
      for (let at = c.text.indexOf(value); at >= 0; at = c.text.indexOf(value, at + 1))
        ranges.push([at, at + value.length]);
    }
    const counts = new Map<string, number>();
    for (const match of c.text.matchAll(WORD)) {
      const start = match.index;
      const end = start + match[0].length;
      if (match[0].length < 2 || ranges.some(([a, b]) => start < b && a < end)) continue;
      counts.set(match[0], (counts.get(match[0]) ?? 0) + 1);
    }
    for (const [word, count] of counts) {
      const taken = Math.max(0, count - countWord(output, word));
      totals.words.total += count;
      totals.words.hits += taken;
      if (/^\p{Lu}/u.test(word)) {
        totals.capitalised.total += count;
        totals.capitalised.hits += taken;
      }
    }
  }
}

const pct = ({ hits, total }: Tally) => (total === 0 ? "    -" : `${((100 * hits) / total).toFixed(1)}%`.padStart(6));

function report(title: string, totals: Totals): void {
  let caught = 0;
  let all = 0;
  for (const { hits, total } of totals.byKind.values()) {
    caught += hits;
    all += total;
  }
  console.log(title);
  console.log(`  identifier recall ${pct({ hits: caught, total: all })}  ${caught}/${all}`);
  for (const [kind, tally] of [...totals.byKind].sort((a, b) => a[0].localeCompare(b[0]))) {
    console.log(`    ${kind.padEnd(10)} ${pct(tally)}  ${String(tally.hits).padStart(4)}/${tally.total}`);
  }
  console.log(`  keep cases wholly kept ${pct(totals.keepCases)}  ${totals.keepCases.hits}/${totals.keepCases.total}`);
  console.log(
    `  keep strings intact    ${pct(totals.keepStrings)}  ${totals.keepStrings.hits}/${totals.keepStrings.total}`,
  );
  const perMille = ({ hits, total }: Tally) => `${((1000 * hits) / Math.max(1, total)).toFixed(2)}‰ (${hits}/${total})`;
  console.log(
    `  words outside identifiers redacted: ${perMille(totals.words)}; capitalised: ${perMille(totals.capitalised)}`,
  );
  for (const line of totals.misses) console.log(line);
}

function main(): void {
  const args = process.argv.slice(2);
  const missKind = args.includes("--misses") ? args[args.indexOf("--misses") + 1] : undefined;
  if (args.includes("--shipped")) {
    const file = args[args.indexOf("--shipped") + 1] ?? "";
    const cases = readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => v.parse(redactCaseSchema, JSON.parse(line)));
    const totals = emptyTotals();
    measure(cases, totals, missKind);
    report(`Shipped redactor on ${file} (${cases.length} cases)`, totals);
    return;
  }
  const cases = redactCases("train");
  const only = args.includes("--only") ? (args[args.indexOf("--only") + 1] ?? "") : "";
  const writers = [...new Set(cases.map((c) => c.source))].filter((writer) => writer.includes(only));
  const examples = examplesOf(cases);
  const numberExamples = numberExamplesOf(cases);
  const all = emptyTotals();
  for (const writer of writers) {
    const held: Array<Sourced<RedactCase>> = cases.filter((c) => c.source === writer);
    useNameTagger(args.includes("--no-tagger") ? null : taggerFrom(examples.filter((e) => e.writer !== writer)));
    useNumberTagger(
      args.includes("--no-number-tagger") ? null : numberTaggerFrom(numberExamples.filter((e) => e.writer !== writer)),
    );
    const one = emptyTotals();
    measure(held, one, undefined);
    measure(held, all, missKind);
    let caught = 0;
    let total = 0;
    for (const tally of one.byKind.values()) {
      caught += tally.hits;
      total += tally.total;
    }
    console.log(
      `${writer.padEnd(34)} recall ${pct({ hits: caught, total })}  name ${pct(one.byKind.get("name") ?? { hits: 0, total: 0 })}  keep cases ${pct(one.keepCases)}  capitalised words taken ${one.capitalised.hits}/${one.capitalised.total}`,
    );
  }
  report("\nAll writers, each held out once", all);
}

if (import.meta.main) main();
