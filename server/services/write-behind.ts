/**
 * What the server writes behind, off the event loop: planning audit rows (plugins/planning/
 * audit-log.ts) and usage rollups (usage.ts). With a database file both go to one worker thread
 * with its own connection (write-behind-worker.ts), so their commits, SQLite's checkpoints and,
 * with several processes on one file, the wait for the write lock never hold a request. With
 * `:memory:` (tests, a throwaway server) they are written in-thread.
 */
import type { Database } from "bun:sqlite";
import { type AuditSink, auditWriter } from "../../plugins/planning/audit-log.ts";
import { usageWriter } from "./usage.ts";

export interface WriteBehind {
  audit: AuditSink;
  /** A batch of usage rows as JSON text (UsageRecorder.flush). */
  usage: (batch: string) => void;
  /** Resolves when everything handed over is committed. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

export type WriteBehindMessage =
  | { type: "open"; path: string }
  | { type: "audit"; batch: string }
  | { type: "usage"; batch: string }
  | { type: "drain"; id: number };

export function inlineWriteBehind(sqlite: Database): WriteBehind {
  const done = async () => {};
  return {
    audit: { write: auditWriter(sqlite), drain: done, close: done },
    usage: usageWriter(sqlite),
    drain: done,
    close: done,
  };
}

export function workerWriteBehind(path: string): WriteBehind {
  const worker = new Worker(new URL("./write-behind-worker.ts", import.meta.url).href);
  const post = (message: WriteBehindMessage) => worker.postMessage(message);
  post({ type: "open", path });
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
      post({ type: "drain", id });
    });
  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= drain().then(() => worker.terminate());
    return closed;
  };
  return {
    audit: { write: (batch) => post({ type: "audit", batch }), drain, close },
    usage: (batch) => post({ type: "usage", batch }),
    drain,
    close,
  };
}
