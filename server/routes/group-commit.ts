/**
 * Group commit: writes that arrive in the same turn of the event loop share one SQLite
 * transaction, so N concurrent triggers pay for one commit instead of N. Each write still runs
 * in its own savepoint (a failing one rolls back alone) and its caller is answered only after
 * the shared commit: nothing is acknowledged before it is durable.
 */
import type { Database } from "bun:sqlite";

interface Pending {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

export class GroupCommit {
  private queue: Pending[] = [];

  constructor(private readonly sqlite: Database) {}

  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (this.queue.length === 1) setImmediate(() => this.commit());
    });
  }

  private commit(): void {
    const batch = this.queue;
    this.queue = [];
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      this.sqlite
        .transaction(() => {
          for (const item of batch) {
            try {
              outcomes.push({ ok: true, value: this.sqlite.transaction(item.work)() });
            } catch (error) {
              outcomes.push({ ok: false, error });
            }
          }
        })
        .immediate();
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i];
      if (outcome?.ok) item.resolve(outcome.value);
      else item.reject(outcome?.error);
    });
  }
}
