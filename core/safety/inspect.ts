/**
 * The safety boundary as one call, the same in the CLI (before anything is sent) and in the
 * server's safety gate (which trusts neither the client's intent nor its redaction).
 *
 * The raw prompt and its redacted form are both classified, and a block by either wins:
 * redaction must never turn a clinical prompt into a builder one.
 */
import { assess } from "../classify.ts";
import type { Intent } from "../intents.ts";
import { redact } from "../redact.ts";
import type { BlockedCategory } from "./categories.ts";

export interface Inspection {
  intent: Intent;
  /** What fired, when the intent is `clinical_blocked`; otherwise null. */
  category: BlockedCategory | null;
  redacted: string;
}

export function inspectPrompt(prompt: string): Inspection {
  const redacted = redact(prompt);
  const raw = assess(prompt);
  if (raw.intent === "clinical_blocked" || redacted === prompt) return { ...raw, redacted };
  return { ...assess(redacted), redacted };
}
