/**
 * planning: the call to the upstream planner (embedded or a model behind a gateway), and the
 * audit row of every answered planning call. Upstream failures become 502/504 problems.
 */
import { Elysia } from "elysia";
import type { AuditLog } from "./audit-log.ts";
import type { PlanResult } from "../../http/plan-result.ts";
import { HttpProblem } from "../../http/problem.ts";
import type { Upstream } from "./upstream.ts";
import type { PlanningRequest } from "../../schema/wire.ts";
import { context, instanceSeed, type RequestState } from "../../http/context.ts";

export interface PlanningOptions {
  upstream: Upstream;
  audit: AuditLog;
}

export const planning = (options: PlanningOptions) =>
  new Elysia({ name: "health.planning", seed: instanceSeed() })
    .use(context)
    .decorate(
      "callUpstream",
      async function callUpstream(request: PlanningRequest, state: RequestState): Promise<PlanResult> {
        const started = performance.now();
        const outcome = await options.upstream.plan({
          prompt: state.redactedPrompt ?? request.redacted_prompt,
          intent: state.intent ?? "build_agent",
          manifest: request.workspace_manifest,
        });
        state.upstreamLatencyMs = Math.round(performance.now() - started);
        state.record("planning", performance.now() - started);
        if (!outcome.ok) {
          throw new HttpProblem(
            outcome.error.kind === "timeout" ? "upstream_timeout" : "upstream_error",
            outcome.error.detail,
          );
        }
        return outcome.value;
      },
    )
    // mapResponse, not onAfterResponse: an after-response hook costs every response of the
    // route a measurable share of throughput, and the row is only queued here anyway.
    .mapResponse({ as: "scoped" }, function writeAuditRow({ state, set }) {
      const principal = state.principal;
      if (state.auditId === undefined || principal === undefined) return;
      options.audit.record({
        auditId: state.auditId,
        requestId: state.requestId,
        company: state.company ?? principal.orgSlug,
        principalKind: principal.kind,
        principalId: principal.id,
        intent: state.intent ?? "unknown",
        cache: state.cache,
        upstreamLatencyMs: state.upstreamLatencyMs ?? null,
        blockedSteps: state.blockedSteps,
        status: typeof set.status === "number" ? set.status : 200,
        createdAt: Date.now(),
      });
    });
