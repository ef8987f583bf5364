/**
 * The sanitizer serializes each plan result once and splices a fresh audit id into the text.
 * Whatever an upstream writes (quotes, NULs, the literal `"audit_id":"` text, unicode), the body
 * must parse to exactly the sanitized plan with the spliced id, and nothing else.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import * as v from "valibot";
import { sanitizePlan } from "../core/gate.ts";
import { envelopeOf } from "../plugins/sanitizer.ts";
import { PlanResult } from "../http/plan-result.ts";
import { type DraftPlan, planningResponseSchema } from "../schema/wire.ts";

const hostileText = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: "binary", maxLength: 200 }),
  fc.constantFrom('"audit_id":"', '","audit_id":"x"}', "\u0000audit-id\u0000", '\\"audit_id\\":\\"', "health verify"),
);
const draft: fc.Arbitrary<DraftPlan> = fc.record({
  assistant_message: hostileText,
  tool_plan: fc.array(
    fc.record({
      kind: fc.string({ maxLength: 32 }),
      command: fc.oneof(
        hostileText,
        fc.constant("health verify"),
        hostileText.map((t) => `health init ${t}`),
      ),
      purpose: hostileText,
      requires_auth: fc.boolean(),
    }),
    { maxLength: 6 },
  ),
});
const route = fc.option(fc.record({ egress: hostileText, provider: hostileText, model: hostileText }), { nil: null });

describe("sanitizer envelope", () => {
  test("a spliced body parses to the sanitized plan with exactly the spliced audit id", () => {
    fc.assert(
      fc.property(draft, route, (plan, upstreamRoute) => {
        const result = new PlanResult(plan, upstreamRoute);
        const envelope = envelopeOf(result, "build_agent");
        const auditId = `cli-code-${Bun.randomUUIDv7()}`;
        const parsed = v.parse(planningResponseSchema, JSON.parse(envelope.head + auditId + envelope.tail));
        const clean = sanitizePlan(plan);
        expect(parsed.audit_id).toBe(auditId);
        expect(parsed.assistant_message).toBe(clean.assistant_message);
        expect(parsed.tool_plan).toEqual(upstreamRoute === null ? [] : clean.tool_plan);
        expect(envelope.blockedSteps).toBe(clean.blockedSteps);
        if (upstreamRoute !== null) {
          expect(parsed.metadata).toEqual({
            egress: upstreamRoute.egress,
            upstream_provider: upstreamRoute.provider,
            upstream_model: upstreamRoute.model,
            classified_intent: "build_agent",
          });
        }
      }),
      { numRuns: 300 },
    );
  });

  test("a result is serialized once per intent and reused", () => {
    const result = new PlanResult({ assistant_message: "ok", tool_plan: [] }, null);
    const first = envelopeOf(result, "build_agent");
    expect(envelopeOf(result, "build_agent")).toBe(first);
    expect(envelopeOf(result, "configure_route")).not.toBe(first);
  });
});
