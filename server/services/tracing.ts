/**
 * OpenTelemetry traces, on when the standard `OTEL_EXPORTER_OTLP_ENDPOINT` (or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set, and sent with the official SDK's OTLP/HTTP
 * exporter in batches. Off, `createTracing` returns null and nothing of it runs: the request path
 * tests one field.
 *
 * - Each request gets a server span, started as the request arrives (so its ids exist while it is
 *   handled) and ended as its answer is rendered, with a child per plugin that ran, timed from
 *   what the plugins record for Server-Timing, and one for the upstream call. An incoming W3C
 *   `traceparent` makes the span its child.
 * - A trigger stores its request span's traceparent on the run; when the run ends, a span for the
 *   run (from queued to ended) joins that trace, with a child per step attempt read from the run's
 *   stored attempts. One trace goes from the HTTP request to the last step.
 * Spans carry ids, routes, statuses and names, never a prompt, a body or a token.
 */
import { ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { RunEnded } from "../../core/loop/runner.ts";
import type { AttemptSpanRow, RunStore } from "../../core/loop/store.ts";
import type { RequestState } from "../../http/context.ts";
import { parseTraceparent } from "../../http/traceparent.ts";
import { SERVER_VERSION } from "../version.ts";

/** Milliseconds since the epoch, from a `performance.now()` reading. */
const epochMs = (performanceMs: number) => performance.timeOrigin + performanceMs;

export interface Tracing {
  /** The server span of a request, started as it arrives. */
  startRequest(request: Request): Span;
  /** Ends the request's span with its plugins' children; called as the answer is rendered. */
  endRequest(state: RequestState, route: string, status: number, problem: string | undefined): void;
  /** The spans of a run that ended, joined to the trace of the request that queued it. */
  runEnded(run: RunEnded): void;
  /** Sends what is pending and stops. */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** Where spans go: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  endpoint: string | undefined;
  serviceName: string;
  /** Where a run's step attempts are read when it ends: the engine's store, either dialect. */
  runs: Pick<RunStore, "attemptSpans">;
  /** Batch delay; the SDK's default is 5 s. */
  exportDelayMs?: number;
}

export function createTracing(options: TracingOptions): Tracing | null {
  if (options.endpoint === undefined) return null;
  // The exporter reads headers and timeout from the standard OTEL_* variables itself.
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      "service.name": options.serviceName,
      "service.version": SERVER_VERSION,
    }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: options.endpoint }), {
        scheduledDelayMillis: options.exportDelayMs ?? 1_000,
      }),
    ],
  });
  const tracer: Tracer = provider.getTracer("health", SERVER_VERSION);

  return {
    startRequest(request) {
      const parent = parseTraceparent(request.headers.get("traceparent"));
      const context = parent === null ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, parent);
      return tracer.startSpan(
        `${request.method} request`,
        {
          kind: SpanKind.SERVER,
          startTime: epochMs(performance.now()),
          attributes: { "http.request.method": request.method },
        },
        context,
      );
    },

    endRequest(state, route, status, problem) {
      const span = state.span;
      if (span === undefined) return;
      span.updateName(`${state.method} ${route}`);
      span.setAttributes({
        "http.route": route,
        "http.response.status_code": status,
        "health.request_id": state.requestId,
      });
      if (problem !== undefined) span.setAttribute("health.problem", problem);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      const parent = trace.setSpan(ROOT_CONTEXT, span);
      for (const { name, ms, at } of state.pluginTimes()) {
        const child = tracer.startSpan(name, { startTime: epochMs(at) }, parent);
        if (name === "planning" && state.upstreamLatencyMs !== undefined) {
          // The upstream call is the tail of the planning plugin's time.
          const end = at + ms;
          tracer
            .startSpan(
              "upstream chat completion",
              { kind: SpanKind.CLIENT, startTime: epochMs(end - state.upstreamLatencyMs) },
              trace.setSpan(ROOT_CONTEXT, child),
            )
            .end(epochMs(end));
        }
        child.end(epochMs(at + ms));
      }
      span.end(epochMs(performance.now()));
    },

    runEnded(run) {
      // Off the engine's path: the attempts are read, then the spans made; a failed read costs the steps' spans.
      // Never a rejection left unhandled: a span that cannot be made is only a span missing.
      options.runs
        .attemptSpans(run.runId)
        .catch((): AttemptSpanRow[] => [])
        .then((attempts) => runSpans(run, attempts))
        .catch(() => undefined);
    },

    async shutdown() {
      await provider.shutdown();
    },
  };

  function runSpans(run: RunEnded, attempts: AttemptSpanRow[]): void {
    const parent = parseTraceparent(run.traceparent);
    const context = parent === null ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, parent);
    const span = tracer.startSpan(
      `run ${run.loopId}`,
      {
        kind: SpanKind.CONSUMER,
        startTime: run.createdAt,
        attributes: { "health.run_id": run.runId, "health.loop_id": run.loopId, "health.run.status": run.status },
      },
      context,
    );
    if (run.status === "errored") span.setStatus({ code: SpanStatusCode.ERROR });
    const runContext = trace.setSpan(ROOT_CONTEXT, span);
    const now = Date.now();
    for (const a of attempts) {
      const step = tracer.startSpan(
        `step ${a.name ?? a.key}`,
        {
          startTime: a.startedAt,
          attributes: { "health.step.key": a.key, "health.step.attempt": a.attempt, "health.step.status": a.status },
        },
        runContext,
      );
      if (a.status !== "complete") step.setStatus({ code: SpanStatusCode.ERROR });
      step.end(a.finishedAt ?? now);
    }
    span.end(now);
  }
}
