/**
 * The trigger endpoint (docs/interface.md §4.2) and run read-back. Order: auth (token, organization and
 * scope, via the one authorization function) → idempotency → the route. The run row, and the
 * Idempotency-Key record when one was sent, commit in one transaction before the 202, through the
 * dialect's TriggerStore (triggers.ts: on SQLite, triggers arriving together share that commit).
 */
import { Elysia } from "elysia";
import { formatTraceparent } from "../../http/traceparent.ts";
import type { Engine } from "../../core/loop/engine.ts";
import { auth, type BearerAuth } from "../../plugins/auth.ts";
import { idempotency } from "../../plugins/idempotency/index.ts";
import { bodyValue, jsonBody } from "../../http/body.ts";
import type { IdempotencyStore } from "../../plugins/idempotency/store.ts";
import type { TriggerStore } from "./triggers.ts";
import type { LoopCatalog } from "../services/loop-catalog.ts";
import { HttpProblem } from "../../http/problem.ts";

export const TRIGGER_BODY_LIMIT = 1024 * 1024;
/** Deeper JSON than this is refused: it buys nothing and can exhaust a stack downstream. */
export const MAX_JSON_DEPTH = 64;

export interface LoopRoutesDeps {
  /** Synchronous over SQLite, a promise over PostgreSQL (plugins/auth.ts). */
  bearer: BearerAuth;
  /**
   * In the database, also with Redis: the key's record commits in the run's own transaction,
   * which is what makes a repeated trigger yield the same run and never a second one. The same
   * database as `triggers`.
   */
  idempotency: IdempotencyStore;
  /** Commits the run and the key's record together (triggers.ts). */
  triggers: TriggerStore;
  engine: Engine;
  catalog: LoopCatalog;
}

export function jsonDepth(value: unknown): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop() as [unknown, number];
    if (typeof item !== "object" || item === null) continue;
    if (depth > deepest) deepest = depth;
    if (deepest > MAX_JSON_DEPTH) return deepest;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return deepest;
}

const notFound = (what: string) => new HttpProblem("not_found", `No ${what} in this organization`);

export function loopRoutes(deps: LoopRoutesDeps) {
  return new Elysia()
    .use(
      auth({
        ...deps.bearer,
        action: (params) => ({ kind: "loop:run", orgId: params.orgId ?? "", loopId: params.loopId ?? "" }),
      }),
    )
    .get("/loop/:orgId/:loopId/runs/:runId", async function readRun({ params }) {
      const run = await deps.engine.get(params.orgId, params.runId);
      if (run === null || run.loopId !== params.loopId) throw notFound(`run ${params.runId} of ${params.loopId}`);
      return run;
    })
    .use(idempotency({ store: deps.idempotency }))
    .post(
      "/loop/:orgId/:loopId",
      async function triggerRun({ params, body, state, set }) {
        const principal = state.principal;
        if (principal === undefined) throw new HttpProblem("internal", "trigger ran before auth");
        if (deps.catalog.get(params.orgId, params.loopId) === undefined) throw notFound(`loop ${params.loopId}`);
        const input = bodyValue(body);
        if (jsonDepth(input) > MAX_JSON_DEPTH) {
          throw new HttpProblem("invalid_request", `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`);
        }
        const pending = state.idempotency;
        const started = await deps.engine.enqueue(
          {
            orgId: params.orgId,
            loopId: params.loopId,
            input,
            trigger: { kind: "token", id: principal.id, name: principal.name },
            // Traced, the run's spans join this request's trace.
            traceparent: state.span === undefined ? undefined : formatTraceparent(state.span.spanContext()),
          },
          (run) =>
            deps.triggers.insert(
              run,
              pending === undefined
                ? undefined
                : { ...pending, status: 202, body: { runId: run.id, workflowInstanceId: run.workflowInstanceId } },
            ),
        );
        // Stored with the run: the plugin has nothing left to store, nor to free on failure.
        if (pending !== undefined) state.idempotency = undefined;
        set.status = 202;
        return started;
      },
      { parse: jsonBody(TRIGGER_BODY_LIMIT) },
    );
}
