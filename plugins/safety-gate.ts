/**
 * safety-gate: the server does not trust the client's intent or redaction. It classifies the
 * prompt again and redacts anything that still looks like patient data before the upstream
 * or the cache sees it. A clinical prompt (by our classification or the client's) gets the
 * blocked response and the upstream is never called (spec 4.1 rule 1).
 */
import { Elysia } from "elysia";
import { classify } from "../core/classify.ts";
import type { Intent } from "../core/intents.ts";
import { blockedPlan } from "../core/planner.ts";
import { redact } from "../core/redact.ts";
import { PlanResult } from "../server/plan-result.ts";
import type { PlanningRequest } from "../schema/wire.ts";
import { context, instanceSeed } from "./context.ts";

export interface SafetyGateOptions {
  /** Prompts remembered with their verdict; classify and redact are pure, so this is safe. */
  memoEntries?: number;
}

interface Verdict {
  intent: Intent;
  redacted: string;
}

export function inspectPrompt(prompt: string): Verdict {
  // Classify the redacted text too: redaction must never turn a clinical prompt into a builder one.
  const redacted = redact(prompt);
  const intent = classify(prompt) === "clinical_blocked" ? "clinical_blocked" : classify(redacted);
  return { intent, redacted };
}

export const safetyGate = (options: SafetyGateOptions = {}) => {
  const memoEntries = options.memoEntries ?? 1_000;
  const memo = new Map<string, Verdict>();
  function inspect(prompt: string): Verdict {
    const known = memo.get(prompt);
    if (known) return known;
    const verdict = inspectPrompt(prompt);
    if (memo.size >= memoEntries) memo.clear();
    memo.set(prompt, verdict);
    return verdict;
  }

  return new Elysia({ name: "health.safety-gate", seed: instanceSeed() })
    .use(context)
    .onBeforeHandle({ as: "scoped" }, function gatePrompt({ body, state }) {
      // Validation already ran: the body is a PlanningRequest.
      const request = body as PlanningRequest;
      const started = performance.now();
      const verdict = inspect(request.redacted_prompt);
      state.record("safety-gate", performance.now() - started);
      const blocked = verdict.intent === "clinical_blocked" || request.intent === "clinical_blocked";
      state.intent = blocked ? "clinical_blocked" : verdict.intent;
      state.redactedPrompt = verdict.redacted;
      if (blocked) return new PlanResult(blockedPlan(), null);
    });
};
