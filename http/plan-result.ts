/**
 * What travels between the planning plugins on the way out: a draft plan and the route it
 * took. The sanitizer turns it into the wire response; nothing else leaves as a plan.
 */
import type { BlockedCategory, DraftPlan } from "../schema/wire.ts";

export interface UpstreamRoute {
  /** The gateway the call went through (its host), or `embedded`. */
  egress: string;
  provider: string;
  model: string;
}

export class PlanResult {
  constructor(
    readonly draft: DraftPlan,
    /** null when the safety gate blocked the prompt and no upstream was called. */
    readonly route: UpstreamRoute | null,
    /** What fired, when the safety gate blocked the prompt. */
    readonly blockedCategory: BlockedCategory | null = null,
  ) {}
}
