/** How the console writes times, durations, scopes, statuses and commands. */
import { isFinishedRunStatus } from "../schema/statuses.ts";
import type { RunSummary } from "./api.ts";

export const isFinished = isFinishedRunStatus;

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "long" });

/** The absolute time with its time zone ("Nov 24, 2026, 1:52:03 AM UTC"), shown on hover. */
export function formatTime(iso: string | null): string {
  return iso === null ? "—" : dateTime.format(new Date(iso));
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const totalSeconds = Math.round(ms / 1000);
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  return hours > 0 ? `${hours} h ${minutes} min` : `${minutes} min ${seconds} s`;
}

/** From the first execution to the end; a run still going is measured up to `nowMs`. */
export function runDuration(
  run: Pick<RunSummary, "startedAt" | "finishedAt" | "status" | "updatedAt">,
  nowMs: number,
): string {
  if (run.startedAt === null) return "—";
  const end = run.finishedAt ?? (isFinished(run.status) ? run.updatedAt : null);
  const endMs = end === null ? nowMs : Date.parse(end);
  return formatDuration(endMs - Date.parse(run.startedAt));
}

export function stepDuration(startedAt: string, finishedAt: string | null): string {
  return finishedAt === null ? "—" : formatDuration(Date.parse(finishedAt) - Date.parse(startedAt));
}

export function scopeLabel(scope: string): string {
  if (scope === "loop:run") return "All loops";
  if (scope === "cli:run") return "CLI planning";
  if (scope.startsWith("loop:run:")) return `Loop ${scope.slice("loop:run:".length)}`;
  return scope;
}

export const maskedToken = (token: { prefix: string; lastFour: string }): string => `${token.prefix}…${token.lastFour}`;

/** Trigger URLs are an origin plus ids, so single quotes are enough for any shell. */
export function curlCommand(triggerUrl: string): string {
  return [
    `curl -X POST '${triggerUrl}' \\`,
    `  -H "Authorization: Bearer $HEALTH_TOKEN" \\`,
    `  -H 'Content-Type: application/json' \\`,
    `  -d '{"hello": "world"}'`,
  ].join("\n");
}

/** JSON for people; `undefined` is what a bodiless trigger gives, and is said in words. */
export function prettyJson(value: unknown): string {
  if (value === undefined) return "undefined";
  return JSON.stringify(value, null, 2) ?? String(value);
}
