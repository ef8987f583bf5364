/**
 * The token store, one suite for both dialects: SQLite (the server's store, in memory) and
 * PostgreSQL (a real server from test/support/postgres.ts, a database of its own). Create, list,
 * revoke, lookup by hash, revoked tokens refused by the authenticator, lastUsedAt written behind,
 * and organizations kept apart. PostgreSQL's half skips, saying so, where it is not installed.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { generateToken, hashToken, isWellFormedToken } from "../core/tokens.ts";
import * as pgTables from "../schema/pg-tables.ts";
import * as liteTables from "../schema/tables.ts";
import { openPostgres } from "../server/db-postgres.ts";
import { openDatabase } from "../server/db.ts";
import { Authenticator } from "../server/services/authenticator.ts";
import { PostgresTokenStore } from "../server/services/token-store-postgres.ts";
import { SqliteTokenStore } from "../server/services/token-store-sqlite.ts";
import type { Actor, TokenRow, TokenStore } from "../server/services/tokens.ts";
import { hasPostgres, startPostgres, type TestPostgres, warnIfNoPostgres } from "./support/postgres.ts";
import { tampered } from "./support/tampered.ts";
import { tempDir } from "./support/temp-dir.ts";

warnIfNoPostgres("the PostgreSQL half of the token store tests");

const T0 = Date.UTC(2031, 4, 6, 12, 0, 0);
const MINUTE = 60_000;
const SYSTEM_KEY = "test-system-key-0123456789abcdef";
const admin: Actor = { kind: "user", id: "usr_admin" };
const ORG_A = { id: "org_a", slug: "clinic-a" };
const ORG_B = { id: "org_b", slug: "clinic-b" };

/** One dialect's store on a fresh database, with a clock the test moves, and raw reads of its tables. */
interface Harness {
  store: TokenStore;
  addOrg(org: { id: string; slug: string }): Promise<void>;
  tokenRows(): Promise<TokenRow[]>;
  audits(): Promise<Array<{ orgId: string; action: string; targetId: string | null; actorId: string }>>;
  close(): Promise<void>;
}

type Clock = { now: number };

let postgres: TestPostgres | undefined;
afterAll(async () => {
  await postgres?.[Symbol.asyncDispose]();
});

const dialects: Array<{ name: string; skip: boolean; open: (clock: Clock) => Promise<Harness> }> = [
  {
    name: "SQLite",
    skip: false,
    async open(clock) {
      const db = openDatabase(":memory:");
      const { organizations, apiTokens, adminAudit } = liteTables;
      return {
        store: new SqliteTokenStore(db, () => clock.now),
        async addOrg(org) {
          db.orm
            .insert(organizations)
            .values({ ...org, name: org.slug, createdAt: T0 })
            .run();
        },
        tokenRows: async () => db.orm.select().from(apiTokens).all(),
        audits: async () => db.orm.select().from(adminAudit).orderBy(adminAudit.id).all(),
        close: async () => db.close(),
      };
    },
  },
  {
    name: "PostgreSQL",
    skip: !hasPostgres,
    async open(clock) {
      postgres ??= await startPostgres();
      const db = await openPostgres(await postgres.createDatabase());
      const { organizations, apiTokens, adminAudit } = pgTables;
      return {
        store: new PostgresTokenStore(db, () => clock.now),
        async addOrg(org) {
          await db.orm.insert(organizations).values({ ...org, name: org.slug, createdAt: T0 });
        },
        tokenRows: async () => db.orm.select().from(apiTokens),
        audits: async () => db.orm.select().from(adminAudit).orderBy(adminAudit.id),
        close: () => db.close(),
      };
    },
  },
];

describe.each(dialects)("token store on $name", ({ skip, open }) => {
  const clock: Clock = { now: T0 };
  let h: Harness;
  let store: TokenStore;

  beforeAll(async () => {
    if (skip) return;
    h = await open(clock);
    store = h.store;
    await h.addOrg(ORG_A);
    await h.addOrg(ORG_B);
  });
  afterAll(async () => {
    await h?.close();
  });
  beforeEach(() => {
    clock.now += MINUTE;
  });

  const authenticator = () =>
    new Authenticator({ tokens: store, systemKeyHash: hashToken(SYSTEM_KEY), defaultOrg: ORG_A, now: () => clock.now });

  test.skipIf(skip)("create returns the token once; only its hash is stored, and the creation is audited", async () => {
    const created = await store.create({ orgId: ORG_A.id, name: "ci", scopes: ["cli:run", "cli:run"], actor: admin });
    expect(isWellFormedToken(created.token)).toBe(true);
    expect(created).toMatchObject({
      name: "ci",
      orgId: ORG_A.id,
      scopes: ["cli:run"],
      prefix: created.token.slice(0, 8),
      lastFour: created.token.slice(-4),
      createdBy: admin.id,
      createdAt: new Date(clock.now).toISOString(),
      lastUsedAt: null,
      revokedAt: null,
    });
    const row = (await h.tokenRows()).find((r) => r.id === created.id);
    expect(row?.hash).toBe(hashToken(created.token));
    expect(JSON.stringify(await h.tokenRows())).not.toContain(created.token);
    expect((await h.audits()).at(-1)).toMatchObject({
      orgId: ORG_A.id,
      action: "token.create",
      targetId: created.id,
      actorId: admin.id,
    });
  });

  test.skipIf(skip)("list: the organization's tokens, newest first, revoked ones kept, no secret", async () => {
    const first = await store.create({ orgId: ORG_A.id, name: "first", scopes: ["loop:run"], actor: admin });
    clock.now += 1;
    const second = await store.create({ orgId: ORG_A.id, name: "second", scopes: ["loop:run"], actor: admin });
    await store.revoke({ orgId: ORG_A.id, id: first.id, actor: admin });
    const listed = await store.list(ORG_A.id);
    const ids = listed.map((t) => t.id);
    expect(ids.indexOf(second.id)).toBeLessThan(ids.indexOf(first.id));
    expect(listed.find((t) => t.id === first.id)?.revokedAt).toBe(new Date(clock.now).toISOString());
    expect(listed.every((t) => t.orgId === ORG_A.id)).toBe(true);
    expect(listed.find((t) => t.id === second.id)).toEqual({ ...second, token: undefined } as never);
  });

  test.skipIf(skip)(
    "revoke: once, then already revoked; an unknown id is not found; each success audited",
    async () => {
      const { id } = await store.create({ orgId: ORG_A.id, name: "to-revoke", scopes: ["cli:run"], actor: admin });
      const revoked = await store.revoke({ orgId: ORG_A.id, id, actor: admin });
      expect(revoked).toEqual({
        ok: true,
        value: expect.objectContaining({ id, revokedAt: new Date(clock.now).toISOString() }),
      });
      expect(await store.revoke({ orgId: ORG_A.id, id, actor: admin })).toEqual({
        ok: false,
        error: "already_revoked",
      });
      expect(await store.revoke({ orgId: ORG_A.id, id: "tok_nope", actor: admin })).toEqual({
        ok: false,
        error: "not_found",
      });
      expect((await h.audits()).filter((a) => a.targetId === id).map((a) => a.action)).toEqual([
        "token.create",
        "token.revoke",
      ]);
    },
  );

  test.skipIf(skip)("two revokes of one token at once: exactly one succeeds and is audited", async () => {
    const { id } = await store.create({ orgId: ORG_A.id, name: "raced", scopes: ["cli:run"], actor: admin });
    const results = await Promise.all([
      store.revoke({ orgId: ORG_A.id, id, actor: admin }),
      store.revoke({ orgId: ORG_A.id, id, actor: { kind: "user", id: "usr_other" } }),
    ]);
    expect(results.map((r) => r.ok).sort()).toEqual([false, true]);
    expect(results.find((r) => !r.ok)).toEqual({ ok: false, error: "already_revoked" });
    expect((await h.audits()).filter((a) => a.targetId === id && a.action === "token.revoke")).toHaveLength(1);
  });

  test.skipIf(skip)(
    "lookup by hash: the token with its organization's slug, revoked or not; unknown is null",
    async () => {
      const created = await store.create({ orgId: ORG_B.id, name: "lookup", scopes: ["loop:run:x"], actor: admin });
      expect(await store.findByHash(hashToken(created.token))).toEqual({
        id: created.id,
        name: "lookup",
        orgId: ORG_B.id,
        scopes: JSON.stringify(["loop:run:x"]),
        revokedAt: null,
        lastUsedAt: null,
        slug: ORG_B.slug,
      });
      await store.revoke({ orgId: ORG_B.id, id: created.id, actor: admin });
      expect((await store.findByHash(hashToken(created.token)))?.revokedAt).toBe(clock.now);
      expect(await store.findByHash(hashToken("hlth_unknown"))).toBeNull();
    },
  );

  test.skipIf(skip)("the authenticator admits a token, refuses it once revoked, and takes the system key", async () => {
    const auth = authenticator();
    const created = await store.create({ orgId: ORG_B.id, name: "auth", scopes: ["cli:run"], actor: admin });
    expect(await auth.authenticate(created.token)).toEqual({
      kind: "token",
      id: created.id,
      name: "auth",
      orgId: ORG_B.id,
      orgSlug: ORG_B.slug,
      scopes: ["cli:run"],
    });
    expect(await auth.authenticate(SYSTEM_KEY)).toMatchObject({ kind: "system", orgId: ORG_A.id });
    expect(await auth.authenticate(tampered(created.token))).toBeNull();
    expect(await auth.authenticate("hlth_not-a-token")).toBeNull();
    await store.revoke({ orgId: ORG_B.id, id: created.id, actor: admin });
    expect(await auth.authenticate(created.token)).toBeNull();
  });

  test.skipIf(skip)("lastUsedAt is written behind, on flush, at most once a minute, never back in time", async () => {
    const auth = authenticator();
    const created = await store.create({ orgId: ORG_A.id, name: "used", scopes: ["cli:run"], actor: admin });
    const lastUsed = async () => (await store.findByHash(hashToken(created.token)))?.lastUsedAt;
    const usedAt = clock.now;
    await auth.authenticate(created.token);
    expect(await lastUsed()).toBeNull();
    await auth.flush();
    expect(await lastUsed()).toBe(usedAt);

    clock.now += 30_000;
    await auth.authenticate(created.token);
    await auth.flush();
    expect(await lastUsed()).toBe(usedAt);

    clock.now += 31_000;
    await auth.authenticate(created.token);
    await auth.flush();
    expect(await lastUsed()).toBe(clock.now);

    // Another instance's older batch arriving late does not move it back.
    await store.touch(new Map([[created.id, usedAt]]));
    expect(await lastUsed()).toBe(clock.now);
    // A batch of several tokens, one unknown: each known one written.
    const other = await store.create({ orgId: ORG_B.id, name: "other", scopes: ["cli:run"], actor: admin });
    await store.touch(
      new Map([
        [created.id, clock.now + 5],
        [other.id, clock.now + 7],
        ["tok_gone", clock.now],
      ]),
    );
    expect(await lastUsed()).toBe(clock.now + 5);
    expect((await store.findByHash(hashToken(other.token)))?.lastUsedAt).toBe(clock.now + 7);
  });

  test.skipIf(skip)("organizations are kept apart: never listed or revoked from another", async () => {
    const mine = await store.create({ orgId: ORG_A.id, name: "a-only", scopes: ["cli:run"], actor: admin });
    const theirs = await store.create({ orgId: ORG_B.id, name: "b-only", scopes: ["cli:run"], actor: admin });
    expect((await store.list(ORG_A.id)).map((t) => t.id)).not.toContain(theirs.id);
    expect((await store.list(ORG_B.id)).map((t) => t.id)).not.toContain(mine.id);
    expect(await store.revoke({ orgId: ORG_A.id, id: theirs.id, actor: admin })).toEqual({
      ok: false,
      error: "not_found",
    });
    expect((await store.findByHash(hashToken(theirs.token)))?.revokedAt).toBeNull();
    expect(await store.list("org_nobody")).toEqual([]);
  });
});

test("a store that answers at once keeps authentication synchronous; one with promises is awaited", async () => {
  const db = openDatabase(":memory:");
  try {
    db.orm
      .insert(liteTables.organizations)
      .values({ ...ORG_A, name: "a", createdAt: T0 })
      .run();
    const store = new SqliteTokenStore(db);
    const { token } = store.createSync({ orgId: ORG_A.id, name: "sync", scopes: ["cli:run"], actor: admin });
    const sync = new Authenticator({ tokens: store, systemKeyHash: hashToken(SYSTEM_KEY), defaultOrg: ORG_A });
    expect(sync.authenticate(token)).toMatchObject({ kind: "token", orgSlug: ORG_A.slug });
    // The same store seen only through the interface, as PostgreSQL's is: a promise.
    const asOnlyAsync: TokenStore = {
      create: (input) => store.create(input),
      list: (orgId) => store.list(orgId),
      revoke: (input) => store.revoke(input),
      findByHash: (hash) => store.findByHash(hash),
      touch: (uses) => store.touch(uses),
    };
    const viaPromise = new Authenticator({
      tokens: asOnlyAsync,
      systemKeyHash: hashToken(SYSTEM_KEY),
      defaultOrg: ORG_A,
    }).authenticate;
    const answer = viaPromise(token);
    expect(answer).toBeInstanceOf(Promise);
    expect(await answer).toMatchObject({ kind: "token", orgSlug: ORG_A.slug });
    const row = db.orm.select().from(liteTables.apiTokens).where(eq(liteTables.apiTokens.orgId, ORG_A.id)).get();
    expect(row?.hash).toBe(hashToken(token));
  } finally {
    db.close();
  }
});

test("a lastUsedAt batch the store fails to write is kept for the next flush", async () => {
  const written: Array<Map<string, number>> = [];
  let failures = 1;
  const lookup = { id: "tok_x", name: "x", orgId: ORG_A.id, scopes: "[]", revokedAt: null, lastUsedAt: null };
  const flaky: TokenStore = {
    create: () => Promise.reject(new Error("unused")),
    list: async () => [],
    revoke: async () => ({ ok: false, error: "not_found" }),
    findByHash: async () => ({ ...lookup, slug: ORG_A.slug }),
    async touch(uses) {
      if (failures-- > 0) throw new Error("the database is away");
      written.push(new Map(uses));
    },
  };
  let now = T0;
  const auth = new Authenticator({
    tokens: flaky,
    systemKeyHash: hashToken(SYSTEM_KEY),
    defaultOrg: ORG_A,
    now: () => now,
  });
  // Any well-formed token: the flaky store answers every hash with the same row.
  await auth.authenticate(generateToken());
  await expect(auth.flush()).rejects.toThrow("the database is away");
  now += 1;
  await auth.flush();
  expect(written).toEqual([new Map([["tok_x", T0]])]);
});

test("SQLite, another process writing the same file: revokes wait for the write lock instead of failing with SQLITE_BUSY", async () => {
  // Two instances on one file (docs/deploy.md). A revoke reads the row, then writes it: begun
  // DEFERRED, a commit by the other process in between makes the write fail at once with
  // SQLITE_BUSY (the busy timeout does not apply to a stale read snapshot); begun IMMEDIATE it
  // waits its turn. Measured here: begun deferred, about one revoke in eight failed.
  using dir = tempDir();
  const path = join(dir, "health.db");
  const db = openDatabase(`file:${path}`);
  db.orm
    .insert(liteTables.organizations)
    .values({ ...ORG_A, name: ORG_A.slug, createdAt: T0 })
    .run();
  const store = new SqliteTokenStore(db);
  const ids = Array.from(
    { length: 2000 },
    (_, i) => store.createSync({ orgId: ORG_A.id, name: `t${i}`, scopes: ["loop:run"], actor: admin }).id,
  );
  const writer = Bun.spawn(
    [
      process.execPath,
      "-e",
      `const db = new (require("bun:sqlite").Database)(${JSON.stringify(path)});
       db.run("PRAGMA busy_timeout = 5000");
       db.run("CREATE TABLE IF NOT EXISTS other_instance (n INTEGER)");
       console.log("ready");
       for (;;) { db.run("INSERT INTO other_instance VALUES (1)"); Bun.sleepSync(1); }`,
    ],
    { stdout: "pipe", stderr: "inherit" },
  );
  try {
    await writer.stdout.getReader().read();
    const written = () => (db.sqlite.query("SELECT count(*) AS n FROM other_instance").get() as { n: number }).n;
    const before = written();
    const failures: string[] = [];
    for (const [i, id] of ids.entries()) {
      try {
        const result = await store.revoke({ id, orgId: ORG_A.id, actor: admin });
        if (!result.ok) failures.push(result.error);
      } catch (error) {
        failures.push(String(error));
      }
      // Back-to-back revokes hold the write lock almost all the time: on a busy machine the other
      // process's busy handler, which sleeps between tries, could lose every race. A pause now and
      // then lets it in, so its writes do fall between the revokes.
      if (i % 25 === 24) await Bun.sleep(2);
    }
    expect(failures).toEqual([]);
    // The other process did write while the revokes ran.
    expect(written()).toBeGreaterThan(before);
  } finally {
    writer.kill();
    await writer.exited;
    db.sqlite.close();
  }
});
