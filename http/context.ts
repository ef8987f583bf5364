/**
 * The per-request state every plugin shares: request id, the principal once auth ran, and one
 * Server-Timing entry per plugin. One mutable object per request is cheaper than a derive per
 * field and keeps what each plugin knows in one typed place.
 */
import type { Span } from "@opentelemetry/api";
import { Elysia } from "elysia";
import type { Principal } from "../core/authz.ts";
import type { Intent } from "../core/intents.ts";
import type { planAudit } from "../schema/tables.ts";

export type CacheStatus = (typeof planAudit.$inferSelect)["cache"];

export class RequestState {
  constructor(readonly method = "GET") {}
  readonly requestId = crypto.randomUUID();
  readonly startedAt = performance.now();
  private readonly timings: Array<{ name: string; ms: number; at: number }> = [];
  /** The plugins this route passes through, in order; set by the route's composition. */
  chain: readonly string[] = [];
  principal: Principal | undefined;
  /** Who a planning call is attributed and rate-limited to. */
  company: string | undefined;
  /** Set by the safety gate: the server's own classification and redaction. */
  intent: Intent | undefined;
  redactedPrompt: string | undefined;
  cache: CacheStatus = "bypass";
  upstreamLatencyMs: number | undefined;
  blockedSteps = 0;
  auditId: string | undefined;
  /** This request's span, when tracing is on (server/services/tracing.ts). */
  span: Span | undefined;
  /** An Idempotency-Key reserved by this request, released or stored when it ends. */
  idempotency: { scope: string; key: string } | undefined;
  /**
   * Told once, as the response (or the problem) is rendered, with the route's pattern, the status
   * and the problem code if any: where metrics are recorded (http/metrics.ts).
   */
  done: ((state: RequestState, route: string, status: number, problem?: string) => void) | undefined;
  private failureHandlers: Array<(error: unknown) => void> | undefined;

  /**
   * Runs `handler` if this request ends in an error: a plugin that reserved something (a cache
   * flight, an Idempotency-Key) releases it there. Cheaper than an after-response hook on every
   * request, which Elysia makes every response pay for.
   */
  onFailure(handler: (error: unknown) => void): void {
    this.failureHandlers ??= [];
    this.failureHandlers.push(handler);
  }

  /** Called once by the error renderer. */
  fail(error: unknown): void {
    const handlers = this.failureHandlers;
    this.failureHandlers = undefined;
    for (const handler of handlers ?? []) handler(error);
  }

  private reported = false;

  /** Tells `done` how the request ended; only the first call counts (a problem is also mapped). */
  finish(route: string, status: number, problem?: string): void {
    if (this.reported || this.done === undefined) return;
    this.reported = true;
    this.done(this, route, status, problem);
  }

  /** Each plugin's recorded time and, for a traced request, when it started (`performance.now()`), in milliseconds. */
  pluginTimes(): ReadonlyArray<{ name: string; ms: number; at: number }> {
    return this.timings;
  }

  /**
   * Records a plugin's time (milliseconds) under its name, as the plugin ends. When it started is
   * read only for a traced request (its span's children need it); otherwise it stays 0.
   */
  record(name: string, ms: number): void {
    this.timings.push({ name, ms, at: this.span === undefined ? 0 : performance.now() - ms });
  }

  /**
   * `Server-Timing`: `auth;dur=0.012, …, total;dur=0.3` (milliseconds, to the microsecond).
   * Plugins of the route's chain that an early answer skipped (a cache hit skips planning)
   * still get an entry, marked skipped.
   */
  serverTiming(): string {
    let header = "";
    for (const t of this.timings) header += `${t.name};dur=${milliseconds(t.ms)}, `;
    chain: for (const name of this.chain) {
      for (const t of this.timings) if (t.name === name) continue chain;
      header += `${name};desc="skipped", `;
    }
    return `${header}total;dur=${milliseconds(performance.now() - this.startedAt)}`;
  }
}

/**
 * Milliseconds to the microsecond, `0.012`: from whole microseconds, since writing a fraction
 * out of a double costs several times what writing two integers does, on every response.
 */
export function milliseconds(ms: number): string {
  const us = Math.round(ms * 1000);
  const whole = Math.floor(us / 1000);
  const fraction = us - whole * 1000;
  return `${whole}.${fraction < 10 ? "00" : fraction < 100 ? "0" : ""}${fraction}`;
}

/**
 * The state is made in `onRequest`, the first hook of all, so it exists even for errors thrown
 * while the body is parsed. `decorate` only declares its type on the context.
 */
export const context = new Elysia({ name: "health.context" })
  .decorate("state", undefined as unknown as RequestState)
  .onRequest(function createRequestState(ctx) {
    const state = new RequestState(ctx.request.method);
    // The app decorates the context with its metrics recorder (server/app.ts), if it has one,
    // and with a span starter when tracing is on.
    const app = ctx as { observeRequest?: RequestState["done"]; startSpan?: (request: Request) => Span };
    state.done = app.observeRequest;
    if (app.startSpan !== undefined) state.span = app.startSpan(ctx.request);
    (ctx as { state?: RequestState }).state = state;
    ctx.set.headers["x-request-id"] = state.requestId;
  })
  // Destructured, not passed whole: Elysia reads a hook's source to decide which request parts
  // (query, headers, cookies) to parse for every route, and a context handed to a function needs all.
  .mapResponse({ as: "global" }, function addServerTiming({ state, set, response, route }) {
    set.headers["server-timing"] = state.serverTiming();
    if (state.done !== undefined) {
      const status = response instanceof Response ? response.status : typeof set.status === "number" ? set.status : 200;
      state.finish(route ?? "unmatched", status);
    }
  });

let instances = 0;
/**
 * Elysia skips a plugin whose `name + JSON.stringify(seed)` it has seen. Options made of
 * functions and stores stringify alike, so a second `auth(...)` with other options would be
 * silently dropped; every factory call gets its own seed instead.
 */
export const instanceSeed = (): number => ++instances;
