/**
 * Usage: per-minute rollups of planning calls and runs (the `usage_minutes` table), and the
 * summaries the Usage page, tRPC `usage.summary` and `health usage` read from them.
 *
 * Writing stays off the request path: a request adds to an in-memory row for its minute (a map
 * lookup and a few additions, see `observePlanning`), and the server's periodic flush hands the
 * pending rows, as one JSON text, to the write-behind writer (a worker thread with its own
 * connection, server/services/write-behind.ts), which merges them in one transaction: counts by
 * addition and histograms by adding their buckets, so several processes on one database file add
 * up rather than overwrite, and no write lock is ever waited for on the event loop. A hard crash
 * loses at most one flush interval of counts, like the audit rows.
 *
 * Reading a window reads one row per minute and series, never the audit or run rows: at a
 * million planning calls a day from ten tokens that is at most 14,400 rows a day.
 */
import type { Database } from "bun:sqlite";
import type { UsageInput, UsageWindow } from "../../schema/admin.ts";
import type { usageMinutes } from "../../schema/tables.ts";

/** Bucket upper bounds in milliseconds; a last bucket counts everything above the last bound. */
export const USAGE_BOUNDS = {
  latency: [0.25, 0.5, 1, 2, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000],
  run: [100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 300_000, 900_000, 3_600_000],
} as const;

type Row = typeof usageMinutes.$inferSelect;
type Key = Pick<Row, "minute" | "orgId" | "company" | "tokenId" | "loopId">;
export const USAGE_COUNTS = [
  "requests",
  "cacheHits",
  "cacheMisses",
  "clinicalBlocks",
  "rateLimited",
  "upstreamErrors",
  "upstreamTimeouts",
  "runsStarted",
  "runsCompleted",
  "runsErrored",
] as const satisfies ReadonlyArray<keyof Row>;
type Count = (typeof USAGE_COUNTS)[number];
const COUNTS = USAGE_COUNTS;
export const USAGE_HISTOGRAMS = ["gatewayMs", "upstreamMs", "runMs"] as const satisfies ReadonlyArray<keyof Row>;
type Histogram = (typeof USAGE_HISTOGRAMS)[number];
const HISTOGRAMS = USAGE_HISTOGRAMS;

/** A row of a batch (JSON text from `UsageRecorder.flush`): counts and bucket counts to add. */
export interface Pending extends Key {
  counts: Record<Count, number>;
  histograms: Partial<Record<Histogram, number[]>>;
}

/** What a finished planning request tells the rollup. */
export interface PlanningObservation {
  orgId: string;
  company: string;
  tokenId: string;
  status: number;
  problem: string | undefined;
  cache: "hit" | "miss" | "bypass";
  clinical: boolean;
  totalMs: number;
  upstreamMs: number | undefined;
}

export interface RunObservation {
  orgId: string;
  loopId: string;
  tokenId: string;
}

const MINUTE_MS = 60_000;

function bucketOf(bounds: readonly number[], value: number): number {
  for (let i = 0; i < bounds.length; i++) if (value <= (bounds[i] as number)) return i;
  return bounds.length;
}

export class UsageRecorder {
  private pending = new Map<string, Pending>();
  /** The row of the previous call: under load most calls are the same series' in the same minute. */
  private last: Pending | undefined;

  /** `write` takes a batch of pending rows as JSON text (see `usageWriter`). */
  constructor(
    private readonly write: (batch: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  private row(key: Omit<Key, "minute">): Pending {
    const minute = Math.floor(this.now() / MINUTE_MS);
    const last = this.last;
    if (
      last !== undefined &&
      last.minute === minute &&
      last.orgId === key.orgId &&
      last.company === key.company &&
      last.tokenId === key.tokenId &&
      last.loopId === key.loopId
    ) {
      return last;
    }
    const id = `${minute}\u0000${key.orgId}\u0000${key.company}\u0000${key.tokenId}\u0000${key.loopId}`;
    let row = this.pending.get(id);
    if (row === undefined) {
      const counts = Object.fromEntries(COUNTS.map((c) => [c, 0])) as Record<Count, number>;
      row = { minute, ...key, counts, histograms: {} };
      this.pending.set(id, row);
    }
    this.last = row;
    return row;
  }

  private observe(row: Pending, histogram: Histogram, bounds: readonly number[], value: number): void {
    let counts = row.histograms[histogram];
    if (counts === undefined) {
      counts = new Array<number>(bounds.length + 1).fill(0);
      row.histograms[histogram] = counts;
    }
    const i = bucketOf(bounds, value);
    counts[i] = (counts[i] ?? 0) + 1;
  }

  /** One answered planning request (called as its response is rendered). */
  observePlanning(o: PlanningObservation): void {
    const row = this.row({ orgId: o.orgId, company: o.company, tokenId: o.tokenId, loopId: "" });
    const { counts } = row;
    counts.requests += 1;
    if (o.status === 429) counts.rateLimited += 1;
    if (o.problem === "upstream_error") counts.upstreamErrors += 1;
    if (o.problem === "upstream_timeout") counts.upstreamTimeouts += 1;
    if (o.clinical) counts.clinicalBlocks += 1;
    else if (o.status === 200 && o.cache === "hit") counts.cacheHits += 1;
    else if (o.status === 200 && o.cache === "miss") counts.cacheMisses += 1;
    const upstream = o.upstreamMs ?? 0;
    this.observe(row, "gatewayMs", USAGE_BOUNDS.latency, Math.max(0, o.totalMs - upstream));
    if (o.upstreamMs !== undefined) this.observe(row, "upstreamMs", USAGE_BOUNDS.latency, o.upstreamMs);
  }

  runQueued(o: RunObservation): void {
    this.row({ orgId: o.orgId, company: "", tokenId: o.tokenId, loopId: o.loopId }).counts.runsStarted += 1;
  }

  runEnded(o: RunObservation & { status: "complete" | "errored"; durationMs: number }): void {
    const row = this.row({ orgId: o.orgId, company: "", tokenId: o.tokenId, loopId: o.loopId });
    if (o.status === "complete") row.counts.runsCompleted += 1;
    else row.counts.runsErrored += 1;
    this.observe(row, "runMs", USAGE_BOUNDS.run, o.durationMs);
  }

  /** Hands the pending rows to the writer; called by the server's periodic flush and at stop. */
  flush(): void {
    if (this.pending.size === 0) return;
    const rows = [...this.pending.values()];
    this.pending = new Map();
    this.last = undefined;
    this.write(JSON.stringify(rows));
  }
}

/**
 * Merges a batch of pending rows (JSON text from `UsageRecorder.flush`) into `usage_minutes`, in
 * one IMMEDIATE transaction: another process merging the same minute waits instead of losing
 * buckets. Runs on the write-behind thread (or inline for an in-memory database).
 */
export function usageWriter(sqlite: Database): (batch: string) => void {
  const select = sqlite.query<Pick<Row, Histogram>, [number, string, string, string, string]>(
    "SELECT gatewayMs, upstreamMs, runMs FROM usage_minutes WHERE minute = ? AND orgId = ? AND company = ? AND tokenId = ? AND loopId = ?",
  );
  const columns = ["minute", "orgId", "company", "tokenId", "loopId", ...COUNTS, ...HISTOGRAMS];
  const upsert = sqlite.query(
    `INSERT INTO usage_minutes (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})
     ON CONFLICT (orgId, minute, company, tokenId, loopId) DO UPDATE SET
     ${[...COUNTS.map((c) => `${c} = ${c} + excluded.${c}`), ...HISTOGRAMS.map((h) => `${h} = excluded.${h}`)].join(", ")}`,
  );
  const merge = sqlite.transaction((rows: Pending[]) => {
    for (const row of rows) {
      const stored = HISTOGRAMS.some((h) => row.histograms[h] !== undefined)
        ? select.get(row.minute, row.orgId, row.company, row.tokenId, row.loopId)
        : null;
      const merged = HISTOGRAMS.map((h) => mergeHistogram(stored?.[h] ?? null, row.histograms[h]));
      upsert.run(
        row.minute,
        row.orgId,
        row.company,
        row.tokenId,
        row.loopId,
        ...COUNTS.map((c) => row.counts[c]),
        ...merged,
      );
    }
  });
  return (batch) => merge.immediate(JSON.parse(batch) as Pending[]);
}

function mergeHistogram(stored: string | null, added: number[] | undefined): string | null {
  if (added === undefined) return stored;
  if (stored === null) return JSON.stringify(added);
  const before = JSON.parse(stored) as number[];
  return JSON.stringify(added.map((n, i) => n + (before[i] ?? 0)));
}

// ---------------------------------------------------------------------------------------------
// Reading.

/** Each window's length and the width of one point of its series, in minutes. */
export const USAGE_WINDOWS: Record<UsageWindow, { minutes: number; step: number }> = {
  "1h": { minutes: 60, step: 1 },
  "24h": { minutes: 1_440, step: 30 },
  "7d": { minutes: 10_080, step: 180 },
  "30d": { minutes: 43_200, step: 720 },
};

/** The value below which a share `q` of the histogram lies, interpolated inside its bucket. */
export function quantile(bounds: readonly number[], counts: readonly number[], q: number): number | null {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    const n = counts[i] ?? 0;
    if (n > 0 && seen + n >= rank) {
      const low = i === 0 ? 0 : (bounds[i - 1] as number);
      // Above the last bound nothing is known but the bound itself.
      if (i >= bounds.length) return low;
      const high = bounds[i] as number;
      return low + (high - low) * Math.max(0, Math.min(1, (rank - seen) / n));
    }
    seen += n;
  }
  return bounds[bounds.length - 1] ?? null;
}

function addInto(sum: number[], text: string | null): void {
  if (text === null) return;
  const counts = JSON.parse(text) as number[];
  for (let i = 0; i < counts.length; i++) sum[i] = (sum[i] ?? 0) + (counts[i] ?? 0);
}

const round = (value: number | null) => (value === null ? null : Math.round(value * 100) / 100);

/** Where a summary reads: the first minute of its window, and the filters of its rows. */
export interface UsageQuery {
  orgId: string;
  fromMinute: number;
  tokenId: string | null;
  /** A company narrows the planning rows; a loop narrows the run rows (planning has no loop). */
  company: string | null;
  loopId: string | null;
}

export function usageQuery(orgId: string, input: UsageInput, nowMs: number): UsageQuery {
  const window = USAGE_WINDOWS[input.window];
  const toMinute = Math.floor(nowMs / MINUTE_MS);
  // Whole steps, ending with the current (partial) one.
  const fromMinute = (Math.floor(toMinute / window.step) + 1) * window.step - window.minutes;
  return {
    orgId,
    fromMinute,
    tokenId: input.tokenId ?? null,
    company: input.company ?? null,
    loopId: input.loopId ?? null,
  };
}

/** Active runs of the query's organization, by status (loop and token filters applied). */
export type ActiveRunsByStatus = ReadonlyArray<{ status: string; n: number }>;

/**
 * The summary of a window from its rollup rows and the active runs: the same figures whichever
 * database the rows came from (createUsageReader, usage-reader-postgres.ts).
 */
export function summarize(
  input: UsageInput,
  query: UsageQuery,
  rows: ReadonlyArray<Row>,
  activeRuns: ActiveRunsByStatus,
  nowMs: number,
) {
  const window = USAGE_WINDOWS[input.window];
  const { fromMinute } = query;
  const points = window.minutes / window.step;
  const series = {
    t: Array.from({ length: points }, (_, i) => (fromMinute + i * window.step) * MINUTE_MS),
    ...(Object.fromEntries(COUNTS.map((c) => [c, new Array<number>(points).fill(0)])) as Record<Count, number[]>),
  };
  const totals = Object.fromEntries(COUNTS.map((c) => [c, 0])) as Record<Count, number>;
  const histograms: Record<Histogram, number[]> = { gatewayMs: [], upstreamMs: [], runMs: [] };
  const byLoop = new Map<string, { loopId: string; completed: number; errored: number }>();
  for (const row of rows) {
    const point = Math.floor((row.minute - fromMinute) / window.step);
    for (const c of COUNTS) {
      totals[c] += row[c];
      const s = series[c];
      if (point >= 0 && point < points) s[point] = (s[point] ?? 0) + row[c];
    }
    for (const h of HISTOGRAMS) addInto(histograms[h], row[h]);
    if (row.loopId !== "" && (row.runsCompleted > 0 || row.runsErrored > 0)) {
      const loop = byLoop.get(row.loopId) ?? { loopId: row.loopId, completed: 0, errored: 0 };
      loop.completed += row.runsCompleted;
      loop.errored += row.runsErrored;
      byLoop.set(row.loopId, loop);
    }
  }
  const active = new Map(activeRuns.map((r) => [r.status, Number(r.n)] as const));
  const latency = (counts: number[]) => ({
    p50: round(quantile(USAGE_BOUNDS.latency, counts, 0.5)),
    p95: round(quantile(USAGE_BOUNDS.latency, counts, 0.95)),
    p99: round(quantile(USAGE_BOUNDS.latency, counts, 0.99)),
  });
  const answered = totals.cacheHits + totals.cacheMisses;
  return {
    window: input.window,
    from: fromMinute * MINUTE_MS,
    to: nowMs,
    stepMs: window.step * MINUTE_MS,
    filters: { company: input.company ?? null, tokenId: input.tokenId ?? null, loopId: input.loopId ?? null },
    planning: {
      requests: totals.requests,
      cacheHits: totals.cacheHits,
      cacheHitRate: answered === 0 ? null : round(totals.cacheHits / answered),
      clinicalBlocks: totals.clinicalBlocks,
      rateLimited: totals.rateLimited,
      upstreamErrors: totals.upstreamErrors,
      upstreamTimeouts: totals.upstreamTimeouts,
      gatewayMs: latency(histograms.gatewayMs),
      upstreamMs: latency(histograms.upstreamMs),
    },
    runs: {
      started: totals.runsStarted,
      completed: totals.runsCompleted,
      errored: totals.runsErrored,
      inFlight: (active.get("running") ?? 0) + (active.get("sleeping") ?? 0),
      queued: active.get("queued") ?? 0,
      durationMs: {
        p50: round(quantile(USAGE_BOUNDS.run, histograms.runMs, 0.5)),
        p95: round(quantile(USAGE_BOUNDS.run, histograms.runMs, 0.95)),
      },
      failingLoops: [...byLoop.values()]
        .filter((loop) => loop.errored > 0)
        .sort((a, b) => b.errored - a.errored || a.loopId.localeCompare(b.loopId))
        .slice(0, 5),
    },
    series,
  };
}

/** Reads the rollups for tRPC `usage.summary`: SQLite answers at once, PostgreSQL with a promise. */
export type UsageReader = (orgId: string, input: UsageInput, nowMs?: number) => UsageSummary | Promise<UsageSummary>;
export type UsageSummary = ReturnType<typeof summarize>;

/** The SQLite reader: the server's connection, its statements prepared once. */
export function createUsageReader(sqlite: Database) {
  const activeRuns = sqlite.query<{ status: string; n: number }, [string, string | null, string | null]>(
    `SELECT status, COUNT(*) AS n FROM runs
     WHERE status IN ('queued', 'running', 'sleeping') AND orgId = ?1 AND (?2 IS NULL OR loopId = ?2)
       AND (?3 IS NULL OR (triggerKind = 'token' AND triggerId = ?3))
     GROUP BY status`,
  );
  const rollups = sqlite.query<Row, [string, number, string | null, string | null, string | null]>(
    `SELECT * FROM usage_minutes WHERE orgId = ?1 AND minute >= ?2 AND (?3 IS NULL OR tokenId = ?3)
       AND (?4 IS NULL OR loopId <> '' OR company = ?4) AND (?5 IS NULL OR loopId = '' OR loopId = ?5)`,
  );

  return function summary(orgId: string, input: UsageInput, nowMs = Date.now()): UsageSummary {
    const q = usageQuery(orgId, input, nowMs);
    const rows = rollups.all(q.orgId, q.fromMinute, q.tokenId, q.company, q.loopId);
    return summarize(input, q, rows, activeRuns.all(orgId, q.loopId, q.tokenId), nowMs);
  };
}
