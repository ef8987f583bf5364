/**
 * The server-side audit of planning calls: one row per answered call, never the prompt or
 * patient context. Rows leave the hot path at once: they are queued and handed over in small
 * batches to a writer. With a database file the writer is a worker thread with its own
 * connection, so the inserts, their commits and SQLite's checkpoints (which fsync) never hold
 * the event loop; with `:memory:` it writes in-thread. A hard crash can lose the rows of at
 * most one flush interval.
 */
import type { Database } from "bun:sqlite";
import type { planAudit } from "../schema/tables.ts";

export type PlanAuditRow = typeof planAudit.$inferInsert;

export const INSERT_AUDIT_ROW = `INSERT OR IGNORE INTO plan_audit (auditId, requestId, company, principalKind, principalId, intent, cache, upstreamLatencyMs, blockedSteps, status, createdAt)
  VALUES ($auditId, $requestId, $company, $principalKind, $principalId, $intent, $cache, $upstreamLatencyMs, $blockedSteps, $status, $createdAt)`;

const BATCH_ROWS = 256;

/** Writes batches of rows in one transaction each. */
export function auditWriter(sqlite: Database): (rows: PlanAuditRow[]) => void {
  const insert = sqlite.query(INSERT_AUDIT_ROW);
  return sqlite.transaction((rows: PlanAuditRow[]) => {
    for (const row of rows) insert.run({ ...row, upstreamLatencyMs: row.upstreamLatencyMs ?? null });
  });
}

export interface AuditSink {
  write(rows: PlanAuditRow[]): void;
  /** Resolves when every row handed over is committed. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

export function inlineSink(sqlite: Database): AuditSink {
  const write = auditWriter(sqlite);
  return { write, drain: async () => {}, close: async () => {} };
}

/** A worker thread with its own connection to `path` (see audit-worker.ts). */
export function workerSink(path: string): AuditSink {
  const worker = new Worker(new URL("./audit-worker.ts", import.meta.url).href);
  worker.postMessage({ type: "open", path });
  let asked = 0;
  const waiting = new Map<number, () => void>();
  worker.addEventListener("message", (event: MessageEvent<{ type: "drained"; id: number }>) => {
    waiting.get(event.data.id)?.();
    waiting.delete(event.data.id);
  });
  const drain = () =>
    new Promise<void>((resolve) => {
      const id = ++asked;
      waiting.set(id, resolve);
      worker.postMessage({ type: "drain", id });
    });
  return {
    write: (rows) => worker.postMessage({ type: "rows", rows }),
    drain,
    async close() {
      await drain();
      worker.terminate();
    },
  };
}

export class AuditLog {
  private queue: PlanAuditRow[] = [];

  constructor(private readonly sink: AuditSink) {}

  record(row: PlanAuditRow): void {
    this.queue.push(row);
    if (this.queue.length === BATCH_ROWS) setImmediate(() => this.flush());
  }

  /** Hands the queued rows to the writer. */
  flush(): void {
    if (this.queue.length === 0) return;
    const rows = this.queue;
    this.queue = [];
    this.sink.write(rows);
  }

  /** Flushes and waits until the writer has committed everything. */
  async drain(): Promise<void> {
    this.flush();
    await this.sink.drain();
  }

  async close(): Promise<void> {
    this.flush();
    await this.sink.close();
  }
}
