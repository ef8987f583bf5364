/**
 * Reading runs back, and terminating one: what the HTTP API, the admin console and the CLI show,
 * in the shape of schema/runs.ts. Times are ISO strings; stored JSON is decoded; the list pages
 * with an opaque cursor. Over either dialect's RunStore, so every answer is a promise.
 */
import type { RunRecord, RunStepRecord, RunSummary } from "../../schema/runs.ts";
import type { Result } from "../result.ts";
import {
  type AttemptRow,
  type ListedRun,
  parseStoredError,
  type RunRow,
  type RunStatus,
  type RunStore,
  type StepRow,
} from "./store.ts";
import { decodeStoredJson } from "./json.ts";

export type { RunRecord, RunStepAttempt, RunStepRecord, RunSummary, TriggerTag } from "../../schema/runs.ts";

export interface LoopStats {
  runs: number;
  complete: number;
  errored: number;
  lastRun: { status: RunStatus; createdAt: string } | null;
}

export interface ListOptions {
  loopId?: string;
  status?: RunStatus;
  /** 1–100, default 20. */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

export interface RunPage {
  runs: RunSummary[];
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

export type ListError = { code: "invalid_cursor"; message: string };

export type TerminateError =
  | { code: "not_found"; message: string }
  | { code: "already_finished"; message: string; status: RunStatus };

const DEFAULT_LIST_LIMIT = 20;
const MAX_LIST_LIMIT = 100;

export function createQueries(store: RunStore, now: () => number) {
  return {
    async get(orgId: string, runId: string): Promise<RunRecord | null> {
      const row = await store.getRun(orgId, runId);
      if (row === null) return null;
      const [steps, attemptRows] = await Promise.all([store.getSteps(runId), store.getAttempts(runId)]);
      const attempts = Map.groupBy(attemptRows, (attempt) => attempt.key);
      return {
        ...toSummary(row),
        steps: steps.map((step) => toStepRecord(step, attempts.get(step.key) ?? [])),
      };
    },

    async list(orgId: string, options: ListOptions = {}): Promise<Result<RunPage, ListError>> {
      const limit = Math.min(MAX_LIST_LIMIT, Math.max(1, Math.floor(options.limit ?? DEFAULT_LIST_LIMIT)));
      let after: { createdAt: number; position: string } | undefined;
      if (options.cursor !== undefined) {
        const decoded = decodeCursor(options.cursor);
        if (decoded === null || !store.isPosition(decoded.position))
          return { ok: false, error: { code: "invalid_cursor", message: "the cursor is not one this server issued" } };
        after = decoded;
      }
      // One extra row tells whether there is a next page without a COUNT.
      const rows = await store.list({ orgId, loopId: options.loopId, status: options.status, limit: limit + 1, after });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      const nextCursor = rows.length > limit && last !== undefined ? encodeCursor(last) : null;
      return { ok: true, value: { runs: page.map(toSummary), nextCursor } };
    },

    async loopStats(orgId: string, loopId: string, windowMs: number): Promise<LoopStats> {
      const { lastStatus, lastCreatedAt, ...counts } = await store.loopStats(orgId, loopId, now() - windowMs);
      const lastRun =
        lastStatus === null || lastCreatedAt === null ? null : { status: lastStatus, createdAt: iso(lastCreatedAt) };
      return { ...counts, lastRun };
    },

    /** Terminates an unfinished run in the database; the engine stops executing it. */
    async terminate(orgId: string, runId: string): Promise<Result<{ status: "terminated" }, TerminateError>> {
      if (await store.terminate(orgId, runId, now())) return { ok: true, value: { status: "terminated" } };
      const row = await store.getRun(orgId, runId);
      if (row === null)
        return { ok: false, error: { code: "not_found", message: `no run ${runId} in this organization` } };
      return {
        ok: false,
        error: {
          code: "already_finished",
          message: `run ${runId} already finished (${row.status})`,
          status: row.status,
        },
      };
    },
  };
}

function toSummary(row: RunRow): RunSummary {
  return {
    id: row.id,
    workflowInstanceId: row.workflowInstanceId,
    loopId: row.loopId,
    orgId: row.orgId,
    status: row.status,
    input: decodeStoredJson(row.input),
    output: decodeStoredJson(row.output),
    error: parseStoredError(row.error),
    trigger: { kind: row.triggerKind, id: row.triggerId, name: row.triggerName },
    attempts: row.attempts,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    startedAt: isoOrNull(row.startedAt),
    finishedAt: isoOrNull(row.finishedAt),
    wakeAt: isoOrNull(row.wakeAt),
  };
}

function toStepRecord(row: StepRow, attempts: AttemptRow[]): RunStepRecord {
  return {
    name: row.name,
    key: row.key,
    index: row.idx,
    kind: row.kind,
    status: row.status,
    attempts: row.attempts,
    attemptLog: attempts.map((attempt) => ({
      attempt: attempt.attempt,
      status: attempt.status,
      error: parseStoredError(attempt.error),
      startedAt: iso(attempt.startedAt),
      finishedAt: isoOrNull(attempt.finishedAt),
    })),
    result: decodeStoredJson(row.result),
    error: parseStoredError(row.error),
    startedAt: iso(row.startedAt),
    finishedAt: isoOrNull(row.finishedAt),
    wakeAt: isoOrNull(row.wakeAt),
  };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : iso(ms);
}

/**
 * Opaque to clients: base64url of "createdAt.position" of the last run on the page, the position
 * being SQLite's rowid (so cursors issued before PostgreSQL existed still work) or PostgreSQL's
 * run id (store.ts, ListedRun).
 */
function encodeCursor(row: ListedRun): string {
  return Buffer.from(`${row.createdAt}.${row.position}`).toString("base64url");
}

function decodeCursor(cursor: string): { createdAt: number; position: string } | null {
  const match = /^(\d{1,15})\.([0-9A-Za-z_]{1,64})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (match === null) return null;
  return { createdAt: Number(match[1]), position: match[2] as string };
}
