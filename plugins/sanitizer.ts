/**
 * sanitizer: the last plugin on the way out. Every step of every plan, from the embedded
 * planner, an upstream model or the cache, passes the command gate (docs/interface.md §1.3) before it leaves;
 * the assistant message is cut to 6 lines. It wraps the plan in the envelope of docs/interface.md §2.2 with a
 * fresh audit id, so a cache hit still gets its own.
 */
import { Elysia } from "elysia";
import type { Intent } from "../core/intents.ts";
import { sanitizePlan } from "../core/gate.ts";
import { PlanResult } from "../http/plan-result.ts";
import { JSON_CONTENT_TYPE } from "../http/problem.ts";
import { EXECUTION_TARGET, PLANNER_MODEL, type PlanningResponse } from "../schema/wire.ts";
import { context, instanceSeed } from "../http/context.ts";

/**
 * A sanitized answer serialized once, around the slot its audit id goes in: `head + id + tail`
 * is the response body. A cache hit only draws a fresh id; gating and serializing the same
 * plan again would cost more than everything else on the hit path.
 */
interface Envelope {
  intent: Intent;
  head: string;
  tail: string;
  blockedSteps: number;
}

/** A placeholder no audit id can equal; only the real property can hold it unescaped. */
const SLOT = "\u0000audit-id\u0000";
const SLOT_PROPERTY = `"audit_id":${JSON.stringify(SLOT)}`;
const AUDIT_PROPERTY = '"audit_id":"';

/** Results are never mutated and a cached one keeps its intent, so the envelope is reusable. */
const envelopes = new WeakMap<PlanResult, Envelope>();

export function envelopeOf(result: PlanResult, intent: Intent): Envelope {
  const known = envelopes.get(result);
  if (known?.intent === intent) return known;
  const clean = sanitizePlan(result.draft);
  const response: PlanningResponse = {
    model: PLANNER_MODEL,
    assistant_message: clean.assistant_message,
    tool_plan: result.route === null ? [] : clean.tool_plan,
    execution_target: EXECUTION_TARGET,
    audit_id: SLOT,
    metadata:
      result.route === null
        ? {
            upstream: "skipped",
            blocked: "clinical_advice",
            classified_intent: "clinical_blocked",
            blocked_category: result.blockedCategory ?? "treatment_recommendation",
          }
        : {
            egress: result.route.egress,
            upstream_provider: result.route.provider,
            upstream_model: result.route.model,
            classified_intent: intent,
          },
  };
  const text = JSON.stringify(response);
  // Inside any string value quotes are escaped, so this sequence is the audit_id property.
  const at = text.indexOf(SLOT_PROPERTY);
  if (at === -1) throw new Error("the planning response lost its audit_id slot");
  const envelope = {
    intent,
    head: text.slice(0, at) + AUDIT_PROPERTY,
    tail: text.slice(at + SLOT_PROPERTY.length - 1),
    blockedSteps: clean.blockedSteps,
  };
  envelopes.set(result, envelope);
  return envelope;
}

export const sanitizer = () =>
  new Elysia({ name: "health.sanitizer", seed: instanceSeed() })
    .use(context)
    .onAfterHandle({ as: "scoped" }, function sanitizeResponse({ responseValue, state, set }) {
      if (!(responseValue instanceof PlanResult)) return;
      const started = performance.now();
      const envelope = envelopeOf(responseValue, state.intent ?? "build_agent");
      state.blockedSteps = envelope.blockedSteps;
      // UUIDv7: time-ordered, so audit rows append to plan_audit's primary key (see core/ids.ts).
      state.auditId = `cli-code-${Bun.randomUUIDv7()}`;
      set.headers["content-type"] = JSON_CONTENT_TYPE;
      set.headers["x-health-cache"] = state.cache;
      const body = envelope.head + state.auditId + envelope.tail;
      state.record("sanitizer", performance.now() - started);
      return body;
    });
