/**
 * safety-gate: the server does not trust the client's intent or redaction. It classifies the
 * prompt again and redacts anything that still looks like patient data before the upstream
 * or the cache sees it. A clinical prompt (by our classification or the client's) gets the
 * blocked response, naming the category that fired, and the upstream is never called (docs/interface.md §4.1
 * rule 1). The classification and redaction are `core/safety/inspect.ts`, the CLI's too.
 */
import { Elysia } from "elysia";
import { clinicalCategory } from "../core/classify.ts";
import { blockedPlan } from "../core/planner.ts";
import { type Inspection, inspectPrompt } from "../core/safety/inspect.ts";
import { PlanResult } from "../http/plan-result.ts";
import type { PlanningRequest } from "../schema/wire.ts";
import { context, instanceSeed } from "../http/context.ts";

export interface SafetyGateOptions {
  /** Prompts remembered with their verdict; classify and redact are pure, so this is safe. */
  memoEntries?: number;
}

export const safetyGate = (options: SafetyGateOptions = {}) => {
  const memoEntries = options.memoEntries ?? 1_000;
  const memo = new Map<string, Inspection>();
  function inspect(prompt: string): Inspection {
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
      if (!blocked) return;
      // A block the client asked for, which our own classification does not share, still names
      // the kind of ask it most resembles.
      const category = verdict.category ?? clinicalCategory(request.redacted_prompt);
      return new PlanResult(blockedPlan(category), null, category);
    });
};
