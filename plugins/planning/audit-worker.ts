/**
 * The audit writer thread: its own SQLite connection (the schema is already migrated by the
 * server), one transaction per batch. Answers `drain` once everything before it is committed.
 */
import { Database } from "bun:sqlite";
import { auditWriter } from "./audit-log.ts";

declare const self: Worker;

type Message = { type: "open"; path: string } | { type: "rows"; batch: string } | { type: "drain"; id: number };

let write: (batch: string) => void = () => {
  throw new Error("the audit writer was not opened");
};

self.addEventListener("message", (event: MessageEvent<Message>) => {
  const message = event.data;
  if (message.type === "open") {
    const sqlite = new Database(message.path, { strict: true });
    sqlite.run("PRAGMA busy_timeout = 5000");
    sqlite.run("PRAGMA synchronous = NORMAL");
    write = auditWriter(sqlite);
  } else if (message.type === "rows") {
    try {
      write(message.batch);
    } catch (error) {
      // Never the rows themselves: only that a batch was lost and why, by class.
      console.error(`[health] audit batch not written: ${(error as Error).name}`);
    }
  } else {
    self.postMessage({ type: "drained", id: message.id });
  }
});
