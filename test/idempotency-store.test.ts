/**
 * Planning Idempotency-Keys over both dialects (plugins/idempotency/store.ts, store-postgres.ts):
 * claim, 409 while in flight and for another body, replay of what was stored, a failed request's
 * key freed, a stale in-flight record taken over, and expiry after 24 hours. On PostgreSQL claims
 * race for real: of many instances claiming one key at once, or taking over one stale record,
 * exactly one wins. And the plugin over the PostgreSQL store, end to end. PostgreSQL's half skips,
 * saying so, where it is not installed.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { context } from "../http/context.ts";
import { errorHandler } from "../http/errors.ts";
import { idempotency } from "../plugins/idempotency/index.ts";
import {
  type Begin,
  IDEMPOTENCY_TTL_MS,
  type IdempotencyStore,
  SqliteIdempotencyStore,
} from "../plugins/idempotency/store.ts";
import { PostgresIdempotencyStore } from "../plugins/idempotency/store-postgres.ts";
import { type DialectHarness, dialects, stopPostgres } from "./support/dialects.ts";

const T0 = Date.UTC(2031, 4, 6, 12);
const STALE_MS = 60_000;

afterAll(stopPostgres);

const storeOf = (h: DialectHarness): IdempotencyStore =>
  h.dialect === "sqlite"
    ? new SqliteIdempotencyStore(h.db.sqlite, STALE_MS)
    : new PostgresIdempotencyStore(h.db, STALE_MS);

const inFlight: Begin = { kind: "conflict", reason: "in_flight" };
const mismatch: Begin = { kind: "conflict", reason: "mismatch" };

describe.each(dialects("the idempotency store tests"))("idempotency store on $name", ({ name, skip, open }) => {
  test.skipIf(skip)("claim, in flight, replay, mismatch, abandon, stale takeover and expiry", async () => {
    const h = await open();
    try {
      const store = storeOf(h);
      const begin = async (key: string, hash: string, at: number) =>
        await store.begin("tok_1 POST /cli", key, hash, at);
      expect(await begin("k1", "h1", T0)).toEqual({ kind: "new" });
      expect(await begin("k1", "h1", T0 + 1)).toEqual(inFlight);
      expect(await begin("k1", "h2", T0 + 1)).toEqual(mismatch);
      await store.complete("tok_1 POST /cli", "k1", 201, { plan: [1, 2] }, { "x-health-cache": "miss" });
      const replay: Begin = {
        kind: "replay",
        status: 201,
        body: '{"plan":[1,2]}',
        headers: { "x-health-cache": "miss" },
      };
      expect(await begin("k1", "h1", T0 + 2)).toEqual(replay);
      expect(await begin("k1", "h2", T0 + 2)).toEqual(mismatch);
      // Another principal's scope is another key.
      expect(await store.begin("tok_2 POST /cli", "k1", "h2", T0 + 2)).toEqual({ kind: "new" });

      // A failed request frees its key; a stored response is never abandoned.
      expect(await begin("k2", "h1", T0)).toEqual({ kind: "new" });
      await store.abandon("tok_1 POST /cli", "k2");
      expect(await begin("k2", "h3", T0 + 1)).toEqual({ kind: "new" });
      await store.abandon("tok_1 POST /cli", "k1");
      expect(await begin("k1", "h1", T0 + 3)).toEqual(replay);

      // In flight longer than staleAfterMs: its process died; the same request takes it over.
      expect(await begin("k3", "h1", T0)).toEqual({ kind: "new" });
      expect(await begin("k3", "h2", T0 + STALE_MS + 1)).toEqual(mismatch);
      expect(await begin("k3", "h1", T0 + STALE_MS - 1)).toEqual(inFlight);
      expect(await begin("k3", "h1", T0 + STALE_MS)).toEqual({ kind: "new" });
      expect(await begin("k3", "h1", T0 + STALE_MS + 1)).toEqual(inFlight);

      // After 24 hours a key is new again, whatever the body.
      expect(await begin("k1", "h9", T0 + IDEMPOTENCY_TTL_MS + 1)).toEqual({ kind: "new" });
      const rows = await h.rows("idempotencyKeys");
      expect(rows.find((r) => r.key === "k1" && r.scope === "tok_1 POST /cli")).toMatchObject({
        requestHash: "h9",
        status: "in_flight",
        responseStatus: null,
        responseBody: null,
      });
    } finally {
      await h.close();
    }
  });

  test.skipIf(skip || name !== "PostgreSQL")("instances claiming one key at once: exactly one wins", async () => {
    const h = await open();
    try {
      // Ten instances, each with its own store, on one database.
      const stores = Array.from({ length: 10 }, () => storeOf(h));
      const claims = await Promise.all(stores.map((s) => s.begin("scope", "race", "h1", T0)));
      expect(claims.filter((c) => c.kind === "new")).toHaveLength(1);
      expect(claims.filter((c) => c.kind === "conflict" && c.reason === "in_flight")).toHaveLength(9);

      const takeovers = await Promise.all(stores.map((s) => s.begin("scope", "race", "h1", T0 + STALE_MS + 5)));
      expect(takeovers.filter((c) => c.kind === "new")).toHaveLength(1);
      expect(takeovers.filter((c) => c.kind === "conflict")).toHaveLength(9);
    } finally {
      await h.close();
    }
  });

  test.skipIf(skip)("through the plugin: 409 while in flight, replay with Idempotent-Replayed", async () => {
    const h = await open();
    try {
      let release: () => void = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let calls = 0;
      const app = new Elysia()
        .use(errorHandler)
        .use(context)
        .use(idempotency({ store: storeOf(h) }))
        .post("/plan", async ({ body }) => {
          calls += 1;
          await gate;
          return { echoed: body, calls };
        });
      const post = (body: unknown) =>
        app.handle(
          new Request("http://gateway/plan", {
            method: "POST",
            headers: { "content-type": "application/json", "idempotency-key": "key-1" },
            body: JSON.stringify(body),
          }),
        );
      const first = post({ a: 1 });
      // Let the first claim its key before the second asks.
      while ((await h.rows("idempotencyKeys")).length === 0) await Bun.sleep(1);
      const second = await post({ a: 1 });
      expect(second.status).toBe(409);
      release();
      expect(await (await first).json()).toEqual({ echoed: { a: 1 }, calls: 1 });
      const replayed = await post({ a: 1 });
      expect(replayed.headers.get("idempotent-replayed")).toBe("true");
      expect(await replayed.json()).toEqual({ echoed: { a: 1 }, calls: 1 });
      expect((await post({ a: 2 })).status).toBe(409);
      expect(calls).toBe(1);
    } finally {
      await h.close();
    }
  });
});
