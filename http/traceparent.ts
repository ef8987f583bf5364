/**
 * W3C Trace Context (`traceparent`), read and written without loading OpenTelemetry: the trigger
 * route stores a traced request's parent on its run, and the tracing service (loaded only when
 * tracing is on, server/services/tracing.ts) reads it back.
 */
import type { SpanContext } from "@opentelemetry/api";

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A W3C traceparent header as a remote span context; null when absent or malformed. */
export function parseTraceparent(header: string | null | undefined): SpanContext | null {
  const match = TRACEPARENT.exec(header?.trim().toLowerCase() ?? "");
  if (match === null) return null;
  const [, traceId, spanId, flags] = match as unknown as [string, string, string, string];
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return null;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16), isRemote: true };
}

export function formatTraceparent(context: SpanContext): string {
  return `00-${context.traceId}-${context.spanId}-${context.traceFlags.toString(16).padStart(2, "0")}`;
}
