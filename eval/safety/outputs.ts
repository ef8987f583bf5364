/**
 * What a change to the redactor does to text: its outputs before and after, on inputs built from
 * every training text (classification prompts and redaction cases as written, in lower and upper
 * case, line by line, in windows of 120 characters, and joined thirty at a time: ~85,000 inputs).
 * Run `write` before and after a change, then `diff`: a rule should change only what it means to,
 * and a speed change nothing at all. The held-back part is never read.
 *
 *   bun eval/safety/outputs.ts write FILE           redact every input, one JSON string per line
 *   bun eval/safety/outputs.ts diff BEFORE AFTER    how many outputs changed, and each change once
 *                                                   (the words that differ, three either side)
 */
import { readFileSync, writeFileSync } from "node:fs";
import { redact } from "../../core/redact.ts";
import { classifyCases, redactCases } from "./corpus.ts";

const JOINED = 30;
const WINDOW = 120;
const WINDOW_STEP = 97;
const CONTEXT = 3;

function inputs(): string[] {
  const texts = [...classifyCases("train"), ...redactCases("train")].map((c) => c.text);
  const out: string[] = [];
  for (const text of texts) {
    out.push(text, text.toLowerCase(), text.toUpperCase());
    for (const line of text.split("\n")) if (line.length > 20) out.push(line);
    for (let at = 0; at + 40 < text.length; at += WINDOW_STEP) out.push(text.slice(at, at + WINDOW));
  }
  for (let at = 0; at + JOINED < texts.length; at += JOINED) out.push(texts.slice(at, at + JOINED).join("\n\n"));
  return out;
}

/** The words that differ between two outputs, with `CONTEXT` words either side. */
function change(before: string, after: string): string {
  const a = before.split(/\s+/);
  const b = after.split(/\s+/);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const from = Math.max(0, head - CONTEXT);
  const words = (list: string[]) => list.slice(from, Math.min(list.length, list.length - tail + CONTEXT)).join(" ");
  return `${words(a)}\n  → ${words(b)}`;
}

const [command, first, second] = process.argv.slice(2);
if (command === "write" && first !== undefined) {
  const all = inputs();
  writeFileSync(first, `${all.map((input) => JSON.stringify(redact(input))).join("\n")}\n`);
  console.log(`${all.length} outputs written to ${first}`);
} else if (command === "diff" && first !== undefined && second !== undefined) {
  const before = readFileSync(first, "utf8").split("\n");
  const after = readFileSync(second, "utf8").split("\n");
  if (before.length !== after.length)
    throw new Error("the two files hold different inputs: write both with the same corpus");
  const seen = new Set<string>();
  let changed = 0;
  before.forEach((line, i) => {
    if (line === after[i]) return;
    changed++;
    const shown = change(JSON.parse(line) as string, JSON.parse(after[i] ?? '""') as string);
    if (!seen.has(shown)) {
      seen.add(shown);
      console.log(shown);
    }
  });
  console.log(`${changed} of ${before.length - 1} outputs changed (${seen.size} distinct changes shown)`);
} else {
  console.error("usage: bun eval/safety/outputs.ts write FILE | diff BEFORE AFTER");
  process.exit(2);
}
