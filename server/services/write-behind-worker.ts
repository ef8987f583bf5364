/**
 * The write-behind thread (write-behind.ts): its own SQLite connection (the schema is already
 * migrated by the server), one transaction per batch, in the order batches arrive. Answers
 * `drain` once everything before it is committed.
 */
import { Database } from "bun:sqlite";
import { auditWriter } from "../../plugins/planning/audit-log.ts";
import { usageWriter } from "./usage.ts";
import type { WriteBehindMessage } from "./write-behind.ts";

declare const self: Worker;

let writers: { audit: (batch: string) => void; usage: (batch: string) => void } | undefined;

self.addEventListener("message", (event: MessageEvent<WriteBehindMessage>) => {
  const message = event.data;
  switch (message.type) {
    case "open": {
      const sqlite = new Database(message.path, { strict: true });
      sqlite.run("PRAGMA busy_timeout = 5000");
      sqlite.run("PRAGMA synchronous = NORMAL");
      writers = { audit: auditWriter(sqlite), usage: usageWriter(sqlite) };
      break;
    }
    case "audit":
    case "usage":
      try {
        if (writers === undefined) throw new Error("the write-behind writer was not opened");
        writers[message.type](message.batch);
      } catch (error) {
        // Never the rows themselves: only that a batch was lost and why, by class.
        console.error(`[health] ${message.type} batch not written: ${(error as Error).name}`);
      }
      break;
    case "drain":
      self.postMessage({ type: "drained", id: message.id });
      break;
  }
});
