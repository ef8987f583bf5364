/**
 * The safety boundary as one call, the same in the CLI (before anything is sent) and in the
 * server's safety gate (which trusts neither the client's intent nor its redaction).
 *
 * The model reads the redacted prompt, as it was trained to (the server only ever receives
 * redacted prompts, and identifiers are noise to it); the hard rules read both forms, and a block
 * by either wins, so redaction can never turn a clinical prompt into a builder one.
 */
import { assess, ruleVerdict } from "../classify.ts";
import type { Intent } from "../intents.ts";
import { redact } from "../redact.ts";
import type { BlockedCategory } from "./categories.ts";
import { fold } from "./fold.ts";

export interface Inspection {
  intent: Intent;
  /** What fired, when the intent is `clinical_blocked`; otherwise null. */
  category: BlockedCategory | null;
  redacted: string;
}

export function inspectPrompt(prompt: string): Inspection {
  const redacted = redact(prompt);
  const verdict = assess(redacted);
  if (verdict.intent === "clinical_blocked" || redacted === prompt) return { ...verdict, redacted };
  const raw = ruleVerdict(fold(prompt));
  if (raw !== null && raw !== "builder") return { intent: "clinical_blocked", category: raw, redacted };
  return { ...verdict, redacted };
}
