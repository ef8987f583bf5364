/**
 * Write-behind over PostgreSQL (the SQLite thread and the interface: write-behind.ts). No thread:
 * the writes are asynchronous already, so batches go out on the event loop, one at a time in the
 * order they were handed over, and `drain` waits for the last. A failed batch is reported by its
 * error's class only, never its rows or the statement (drizzle's messages carry the parameters).
 */
import { postgresAuditWriter } from "../../plugins/planning/audit-log-postgres.ts";
import type { PgDb } from "../db-postgres.ts";
import { postgresUsageWriter } from "./usage-writer-postgres.ts";
import type { WriteBehind } from "./write-behind.ts";

export function postgresWriteBehind(
  db: PgDb,
  log: (message: string) => void = (message) => console.error(message),
): WriteBehind {
  const writers = { audit: postgresAuditWriter(db), usage: postgresUsageWriter(db) };
  let tail: Promise<void> = Promise.resolve();
  const enqueue = (kind: "audit" | "usage", batch: string) => {
    tail = tail.then(() =>
      writers[kind](batch).catch((error: unknown) => {
        log(`[health] ${kind} batch not written: ${error instanceof Error ? error.name : "unknown error"}`);
      }),
    );
  };
  const drain = () => tail;
  return {
    audit: { write: (batch) => enqueue("audit", batch), drain, close: drain },
    usage: (batch) => enqueue("usage", batch),
    drain,
    close: drain,
  };
}
