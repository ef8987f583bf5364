/**
 * The labelled safety corpus (`eval/safety/{train,heldout}/*.jsonl`, one case a line; the
 * labels are defined in `eval/safety/GUIDE.md`). `train/` is what the model learns from;
 * `heldout/` was written apart from it and from the code, and only the evaluation reads it.
 */
import type { Hash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { blockedCategories } from "../../core/safety/categories.ts";
import { identifierKinds } from "../../core/redact.ts";

/** `SAFETY_CORPUS_DIR` points the scripts at another copy of the corpus (a snapshot, a draft). */
export const corpusDir = process.env.SAFETY_CORPUS_DIR ?? import.meta.dir;
export type Split = "train" | "heldout";

/**
 * Feeds the names and bytes of the training files whose names start with `prefix` to `hash`, in
 * name order: what a model's version says it was trained from.
 */
export function hashTrainingFiles(hash: Hash, prefix = ""): void {
  const trainDir = join(corpusDir, "train");
  for (const file of readdirSync(trainDir)
    .filter((name) => name.startsWith(prefix))
    .sort()) {
    hash.update(file).update(readFileSync(join(trainDir, file)));
  }
}

export const builderCategories = [
  "guardrail",
  "refusal_test",
  "red_team",
  "eval_rubric",
  "classifier_data",
  "refill_routing",
  "lab_result_notification",
  "prior_auth_routing",
  "appointment_reminders",
  "billing_questions",
  "medication_reminders",
  "eligibility_intake",
  "data_integration",
  "operations_debugging",
  "build_agent",
  "explain",
  "list_tools",
  "deploy",
  "verify",
  "login",
  "configure_route",
] as const;

const text = v.pipe(v.string(), v.minLength(1), v.maxLength(16_000));

export const classifyCaseSchema = v.variant("label", [
  v.object({
    id: v.string(),
    label: v.literal("clinical"),
    category: v.picklist(blockedCategories),
    form: v.string(),
    text,
  }),
  v.object({
    id: v.string(),
    label: v.literal("builder"),
    category: v.picklist(builderCategories),
    form: v.string(),
    text,
  }),
]);
export type ClassifyCase = v.InferOutput<typeof classifyCaseSchema>;

export const redactCaseSchema = v.pipe(
  v.object({
    id: v.string(),
    category: v.string(),
    text,
    identifiers: v.array(v.object({ kind: v.picklist(identifierKinds), value: v.pipe(v.string(), v.minLength(1)) })),
    keep: v.optional(v.array(v.pipe(v.string(), v.minLength(1))), []),
  }),
  v.check(
    (c) => c.identifiers.every((i) => c.text.includes(i.value)) && c.keep.every((k) => c.text.includes(k)),
    "every identifier value and keep string must occur in the text",
  ),
);
export type RedactCase = v.InferOutput<typeof redactCaseSchema>;

/** A case with the file it came from; each file is one writer's work. */
export type Sourced<T> = T & { source: string };

function readCases<T>(split: Split, prefix: string, schema: v.GenericSchema<unknown, T>): Array<Sourced<T>> {
  const dir = join(corpusDir, split);
  const files = readdirSync(dir)
    .filter((name) => name.startsWith(prefix) && name.endsWith(".jsonl"))
    .sort();
  const cases: Array<Sourced<T>> = [];
  for (const file of files) {
    const lines = readFileSync(join(dir, file), "utf8").split("\n");
    lines.forEach((line, index) => {
      if (line.trim() === "") return;
      const parsed = v.safeParse(schema, JSON.parse(line));
      if (!parsed.success) {
        const issue = parsed.issues[0];
        throw new Error(`${split}/${file}:${index + 1}: ${v.getDotPath(issue) ?? ""} ${issue.message}`);
      }
      cases.push({ ...parsed.output, source: file });
    });
  }
  return cases;
}

export function classifyCases(split: Split): Array<Sourced<ClassifyCase>> {
  return readCases(split, "classify", classifyCaseSchema);
}

export function redactCases(split: Split): Array<Sourced<RedactCase>> {
  return readCases(split, "redact", redactCaseSchema);
}
