/**
 * sanitizer: the last plugin on the way out. Every step of every plan, from the embedded
 * planner, an upstream model or the cache, passes the command gate (spec 1.3) before it leaves;
 * the assistant message is cut to 6 lines. It wraps the plan in the spec 2.2 envelope with a
 * fresh audit id, so a cache hit still gets its own.
 */
import { Elysia } from "elysia";
import { type SanitizedPlan, sanitizePlan } from "../core/gate.ts";
import type { DraftPlan } from "../schema/wire.ts";
import { PlanResult } from "../server/plan-result.ts";
import { EXECUTION_TARGET, PLANNER_MODEL, type PlanningResponse } from "../schema/wire.ts";
import { context, instanceSeed, type RequestState } from "./context.ts";

/**
 * sanitizePlan is pure and drafts are never mutated, so a cached draft is gated once and its
 * verdict reused by every hit; a draft nobody holds any more is forgotten with it.
 */
const verdicts = new WeakMap<DraftPlan, SanitizedPlan>();

function sanitizeOnce(draft: DraftPlan): SanitizedPlan {
  let clean = verdicts.get(draft);
  if (clean === undefined) {
    clean = sanitizePlan(draft);
    verdicts.set(draft, clean);
  }
  return clean;
}

export function toResponse(result: PlanResult, state: RequestState): PlanningResponse {
  const clean = sanitizeOnce(result.draft);
  state.blockedSteps = clean.blockedSteps;
  // UUIDv7: time-ordered, so audit rows append to plan_audit's primary key (see core/ids.ts).
  state.auditId = `cli-code-${Bun.randomUUIDv7()}`;
  const intent = state.intent ?? "build_agent";
  return {
    model: PLANNER_MODEL,
    assistant_message: clean.assistant_message,
    tool_plan: result.route === null ? [] : clean.tool_plan,
    execution_target: EXECUTION_TARGET,
    audit_id: state.auditId,
    metadata:
      result.route === null
        ? { upstream: "skipped", blocked: "clinical_advice", classified_intent: "clinical_blocked" }
        : {
            egress: result.route.egress,
            upstream_provider: result.route.provider,
            upstream_model: result.route.model,
            classified_intent: intent,
          },
  };
}

export const sanitizer = () =>
  new Elysia({ name: "health.sanitizer", seed: instanceSeed() })
    .use(context)
    .onAfterHandle({ as: "scoped" }, function sanitizeResponse({ responseValue, state, set }) {
      if (!(responseValue instanceof PlanResult)) return;
      set.headers["x-health-cache"] = state.cache;
      return state.time("sanitizer", () => toResponse(responseValue, state));
    });
