/**
 * The trigger route over both dialects: the real route (server/routes/loops.ts) with the
 * idempotency plugin, committing through SQLite's group commit or PostgreSQL's transaction
 * (server/routes/triggers.ts), its keys in the SQLite or PostgreSQL Idempotency-Key store. A
 * repeated key replays the same run, a different body is 409, a burst with one key makes one run,
 * and the run row and its key's record are committed together.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import type { Principal } from "../core/authz.ts";
import { createEngine } from "../core/loop/engine.ts";
import { context } from "../http/context.ts";
import { errorHandler } from "../http/errors.ts";
import { PostgresIdempotencyStore } from "../plugins/idempotency/store-postgres.ts";
import { SqliteIdempotencyStore } from "../plugins/idempotency/store.ts";
import { loopRoutes } from "../server/routes/loops.ts";
import { createPostgresTriggerStore, createSqliteTriggerStore } from "../server/routes/triggers.ts";
import { defaultOrgCatalog } from "../server/services/loop-catalog.ts";
import { type DialectHarness, dialects, stopPostgres } from "./support/dialects.ts";
import { loadFixtureLoops, waitFor } from "./support/loops.ts";

afterAll(stopPostgres);

const ORG = "org_trigger";
const principal: Principal = {
  kind: "token",
  id: "tok_trigger",
  name: "trigger test",
  orgId: ORG,
  orgSlug: "trigger",
  scopes: ["loop:run"],
};

async function triggerApp(h: DialectHarness) {
  const loops = await loadFixtureLoops();
  const parts =
    h.dialect === "sqlite"
      ? (() => {
          const idempotency = new SqliteIdempotencyStore(h.db.sqlite);
          return {
            idempotency,
            triggers: createSqliteTriggerStore(h.db.sqlite, idempotency),
            engine: createEngine({ sqlite: h.db.sqlite, loops }),
          };
        })()
      : {
          idempotency: new PostgresIdempotencyStore(h.db),
          triggers: createPostgresTriggerStore(h.db.orm),
          engine: createEngine({ postgres: h.db.orm, loops }),
        };
  const app = new Elysia()
    .use(errorHandler)
    .use(context)
    .use(
      loopRoutes({
        ...parts,
        // As the server builds it: synchronous over SQLite, a promise over PostgreSQL.
        bearer:
          h.dialect === "sqlite"
            ? { authenticate: (bearer: string) => (bearer === "good" ? principal : null) }
            : { async: true, authenticate: async (bearer: string) => (bearer === "good" ? principal : null) },
        catalog: defaultOrgCatalog(ORG, loops),
      }),
    );
  const send = (body: string, key?: string) =>
    app.handle(
      new Request(`http://health.test/loop/${ORG}/loop_echo`, {
        method: "POST",
        body,
        headers: {
          authorization: "Bearer good",
          "content-type": "application/json",
          // As a client sends it: without a length (or chunking) the body counts as absent.
          "content-length": String(Buffer.byteLength(body)),
          ...(key === undefined ? {} : { "idempotency-key": key }),
        },
      }),
    );
  return { send, engine: parts.engine };
}

describe.each(dialects("the trigger suite"))("triggers on $name", ({ skip, open }) => {
  test.skipIf(skip)(
    "the same Idempotency-Key gives the same run, also under concurrency; another body is 409",
    async () => {
      const h = await open();
      try {
        const { send, engine } = await triggerApp(h);
        const first = await send('{"a":1}', "k1");
        expect(first.status).toBe(202);
        const started = await first.json();
        expect(started).toEqual({
          runId: expect.stringMatching(/^run_/),
          workflowInstanceId: expect.stringMatching(/^wfi_/),
        });

        const again = await send('{"a":1}', "k1");
        expect({
          status: again.status,
          replayed: again.headers.get("idempotent-replayed"),
          body: await again.json(),
        }).toEqual({ status: 202, replayed: "true", body: started });
        const other = await send('{"a":2}', "k1");
        expect(other.status).toBe(409);

        const burst = await Promise.all(Array.from({ length: 20 }, () => send('{"b":1}', "k2")));
        for (const response of burst) expect([202, 409]).toContain(response.status);
        const accepted = burst.filter((response) => response.status === 202);
        const ids = new Set(await Promise.all(accepted.map(async (response) => (await response.json()).runId)));
        expect(ids.size).toBe(1);

        // Without a key every trigger is a run of its own.
        const plain = await Promise.all([send("1"), send("2")]);
        expect(plain.map((response) => response.status)).toEqual([202, 202]);

        const runs = await h.rows("runs");
        expect(runs.length).toBe(4);
        const keys = await h.rows("idempotencyKeys");
        // Each key's record is done and holds the answer: the run it made, committed with it.
        expect(keys.map((row) => [row.key, row.status, row.responseStatus]).sort()).toEqual([
          ["k1", "done", 202],
          ["k2", "done", 202],
        ]);
        for (const row of keys) {
          const answer = JSON.parse(row.responseBody ?? "null");
          expect(
            runs.some((run) => run.id === answer.runId && run.workflowInstanceId === answer.workflowInstanceId),
          ).toBe(true);
        }
        const read = await engine.get(ORG, started.runId);
        expect({ status: read?.status, input: read?.input }).toEqual({ status: "queued", input: { a: 1 } });
      } finally {
        await h.close();
      }
    },
  );

  test.skipIf(skip)("a trigger that fails frees its key: the retry makes the run", async () => {
    const h = await open();
    try {
      const { send } = await triggerApp(h);
      // A body too deep is refused after the key was reserved; the key is released for a retry.
      const deep = `${"[".repeat(70)}${"]".repeat(70)}`;
      expect((await send(deep, "k3")).status).toBe(400);
      // A shared store (PostgreSQL, as Redis) frees the key without holding up the error answer:
      // a retry sent at once may still find the failed request's record (409) for a moment.
      const retry = await waitFor(async () => {
        const response = await send('{"ok":true}', "k3");
        return response.status === 409 ? undefined : response;
      }, "the key to be freed");
      expect(retry.status).toBe(202);
      expect(retry.headers.get("idempotent-replayed")).toBeNull();
      expect((await h.rows("runs")).length).toBe(1);
    } finally {
      await h.close();
    }
  });
});
