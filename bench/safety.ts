/**
 * Cost of the safety boundary per prompt: classify and redact together, exactly as the safety
 * gate and the CLI run them (`inspectPrompt`), on 300-character prompts and on 16,000-character
 * ones (the longest a planning request may carry). Prompts are the training corpus's own texts,
 * cut or joined to length, so the mix of clean and identifier-laden text is realistic.
 *
 * Budgets (the safety issue): ≤ 100 µs median at 300 characters, ≤ 5 ms at 16,000. Printed, not
 * asserted: timings belong here, not in tests.
 *
 *   bun bench/safety.ts [--rounds 5]
 */
import { parseArgs } from "node:util";
import { assess } from "../core/classify.ts";
import { redact } from "../core/redact.ts";
import { inspectPrompt } from "../core/safety/inspect.ts";
import { classifyCases, redactCases } from "../eval/safety/corpus.ts";

const { values } = parseArgs({ options: { rounds: { type: "string", default: "5" } } });
const rounds = Number(values.rounds);

const texts = [...classifyCases("train"), ...redactCases("train")].map((c) => c.text);

/** Every text brought to `length` characters: long ones cut, short ones joined with the next. */
function prompts(length: number, count: number): string[] {
  const out: string[] = [];
  let at = 0;
  while (out.length < count) {
    let prompt = "";
    while (prompt.length < length) prompt += `${texts[at++ % texts.length] ?? ""} `;
    out.push(prompt.slice(0, length));
  }
  return out;
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0;
}

/**
 * Median and p95 of one call per prompt, over `rounds` passes, after one whole pass that warms up:
 * a server runs the boundary on every request, so its steady state is what counts.
 */
function measure(name: string, inputs: readonly string[], run: (prompt: string) => unknown): number {
  for (const prompt of inputs) run(prompt);
  const samples: number[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const prompt of inputs) {
      const started = performance.now();
      run(prompt);
      samples.push(performance.now() - started);
    }
  }
  samples.sort((a, b) => a - b);
  const median = quantile(samples, 0.5);
  const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`.padStart(11);
  console.log(`  ${name.padEnd(34)} median ${us(median)}   p95 ${us(quantile(samples, 0.95))}`);
  return median;
}

const short = prompts(300, 2_000);
const long = prompts(16_000, 40);

console.log(`Safety boundary, ${rounds} rounds (${short.length} prompts of 300 characters, ${long.length} of 16,000)`);
const shortTotal = measure("classify + redact, 300 chars", short, inspectPrompt);
measure("  classify alone", short, assess);
measure("  redact alone", short, redact);
const longTotal = measure("classify + redact, 16,000 chars", long, inspectPrompt);
measure("  classify alone", long, assess);
measure("  redact alone", long, redact);
console.log(
  `Budgets: 300 chars ${(shortTotal * 1000).toFixed(1)} µs of 100 µs (${((100 * shortTotal) / 0.1).toFixed(0)}%), ` +
    `16,000 chars ${longTotal.toFixed(2)} ms of 5 ms (${((100 * longTotal) / 5).toFixed(0)}%)`,
);
