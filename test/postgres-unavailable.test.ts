/**
 * A PostgreSQL that cannot be reached (nothing listens on its port) answers 503 with Retry-After
 * where the request cannot be decided without it (the token lookup, an Idempotency-Key's claim),
 * as an unreachable Redis does, never 500; and /readyz says not ready. No server is started: the
 * client's connection is refused.
 */
import { afterAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { drizzle } from "drizzle-orm/bun-sql";
import { Elysia } from "elysia";
import { generateToken, hashToken } from "../core/tokens.ts";
import { context } from "../http/context.ts";
import { errorHandler } from "../http/errors.ts";
import { auth } from "../plugins/auth.ts";
import { idempotency } from "../plugins/idempotency/index.ts";
import { PostgresIdempotencyStore } from "../plugins/idempotency/store-postgres.ts";
import * as tables from "../schema/pg-tables.ts";
import type { PgDb } from "../server/db-postgres.ts";
import { isDatabaseUnavailable } from "../server/db-errors.ts";
import { healthRoutes, postgresProbe } from "../server/routes/health.ts";
import { Authenticator } from "../server/services/authenticator.ts";
import { PostgresTokenStore } from "../server/services/token-store-postgres.ts";
import { freePort } from "./support/process-end.ts";

const client = new SQL({ url: `postgres://postgres@127.0.0.1:${freePort()}/health`, connectionTimeout: 2 });
const unreachable = {
  dialect: "postgres",
  client,
  orm: drizzle({ client, schema: tables }),
  close: () => client.close(),
};
const db = unreachable as unknown as PgDb;
afterAll(() => client.close());

const ORG = { id: "org_a", slug: "clinic-a" };
const SYSTEM_KEY = "test-system-key-0123456789abcdef";

test("a token lookup, an Idempotency-Key and /readyz with the database out of reach: 503, not 500", async () => {
  const authenticator = new Authenticator({
    tokens: new PostgresTokenStore(db),
    systemKeyHash: hashToken(SYSTEM_KEY),
    defaultOrg: ORG,
  });
  const app = new Elysia()
    .use(errorHandler)
    .use(context)
    .use(healthRoutes({ database: postgresProbe(db, 500), redis: undefined }))
    .use(
      new Elysia()
        .use(auth({ ...authenticator.bearer, action: () => ({ kind: "cli:run" }) }))
        .use(idempotency({ store: new PostgresIdempotencyStore(db) }))
        .post("/plan", () => ({ ok: true })),
    );
  const post = (bearer: string, key?: string) =>
    app.handle(
      new Request("http://gateway/plan", {
        method: "POST",
        headers: {
          authorization: `Bearer ${bearer}`,
          "content-type": "application/json",
          ...(key === undefined ? {} : { "idempotency-key": key }),
        },
        body: "{}",
      }),
    );

  const looked = await post(generateToken());
  expect(looked.status).toBe(503);
  expect(looked.headers.get("retry-after")).toBe("1");
  // The system key needs no lookup; its Idempotency-Key does.
  expect((await post(SYSTEM_KEY)).status).toBe(200);
  const claimed = await post(SYSTEM_KEY, "key-1");
  expect(claimed.status).toBe(503);
  expect(claimed.headers.get("retry-after")).toBe("1");

  const ready = await app.handle(new Request("http://gateway/readyz"));
  expect(ready.status).toBe(503);
  expect(await ready.json()).toMatchObject({ database: "unavailable" });
});

test("only failures to reach the database count as unavailable", () => {
  const refused = Object.assign(new Error("Failed to connect"), { code: "ERR_POSTGRES_CONNECTION_REFUSED" });
  expect(isDatabaseUnavailable(new Error("Failed query: select …", { cause: refused }))).toBe(true);
  expect(isDatabaseUnavailable(Object.assign(new Error("shutting down"), { errno: "57P01" }))).toBe(true);
  expect(isDatabaseUnavailable(Object.assign(new Error("duplicate key"), { errno: "23505" }))).toBe(false);
  expect(isDatabaseUnavailable(new Error("a bug"))).toBe(false);
  expect(isDatabaseUnavailable("not an error")).toBe(false);
});
