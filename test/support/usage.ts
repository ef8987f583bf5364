/** A planning call as the usage rollup is told of it: a cache hit answered 200, unless overridden. */
import type { PlanningObservation } from "../../server/services/usage.ts";

export function planningCall(overrides: Partial<PlanningObservation> = {}): PlanningObservation {
  return {
    orgId: "org_a",
    company: "acme",
    tokenId: "tok_1",
    status: 200,
    problem: undefined,
    cache: "hit",
    clinical: false,
    totalMs: 1,
    upstreamMs: undefined,
    ...overrides,
  };
}
