/**
 * Start-up over either dialect (server/bootstrap.ts, server/bootstrap-postgres.ts), one suite for
 * both (test/support/dialects.ts): the default organization made once, the system key's hash
 * stored once with its plaintext given back that once, a configured key stored nowhere, the first
 * admin from the environment or a setup code; and on one fresh database several instances starting
 * at once (on PostgreSQL, on separate connections) make one organization, one system key that only
 * one of them prints, and one admin. PostgreSQL's half skips, saying so, where it is not installed.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { sha256Hex } from "../core/hash.ts";
import { PostgresStartupStore } from "../server/bootstrap-postgres.ts";
import { SqliteStartupStore, type StartupStore, startUp } from "../server/bootstrap.ts";
import { PostgresAccountStore } from "../server/services/account-store-postgres.ts";
import { SqliteAccountStore } from "../server/services/account-store-sqlite.ts";
import type { AccountStore } from "../server/services/accounts.ts";
import { type DialectHarness, dialects, stopPostgres } from "./support/dialects.ts";

const T0 = Date.UTC(2031, 4, 6, 12, 0, 0);
const now = () => T0;
const ADMIN = { email: "Owner@Example.com", password: "correct horse battery staple" };

function storesOf(h: DialectHarness): { startup: StartupStore; accounts: AccountStore } {
  return h.dialect === "sqlite"
    ? { startup: new SqliteStartupStore(h.db, now), accounts: new SqliteAccountStore(h.db, now) }
    : { startup: new PostgresStartupStore(h.db, now), accounts: new PostgresAccountStore(h.db, now) };
}

/** `n` instances starting at once on one database, each with its own stores. */
function startAtOnce(h: DialectHarness, n: number, options: Parameters<typeof startUp>[2]) {
  return Promise.all(
    Array.from({ length: n }, () => {
      const { startup, accounts } = storesOf(h);
      return startUp(startup, accounts, options);
    }),
  );
}

afterAll(stopPostgres);

describe.each(dialects("the start-up tests"))("start-up on $name", ({ skip, open }) => {
  test.skipIf(skip)("the default organization and the system key are made once; a restart reads them", async () => {
    const h = await open();
    try {
      const { startup } = storesOf(h);
      const org = await startup.ensureDefaultOrganization();
      expect(org).toEqual({ id: expect.stringMatching(/^org_/), slug: "default" });
      expect(await startup.ensureDefaultOrganization()).toEqual(org);
      expect(await h.rows("organizations")).toEqual([
        { id: org.id, slug: "default", name: "Default organization", createdAt: T0 },
      ]);

      const first = await startup.resolveSystemKey(undefined);
      if (first.generated === undefined) throw new Error("no key generated");
      expect(first.hash).toBe(sha256Hex(first.generated));
      expect(await startup.resolveSystemKey(undefined)).toEqual({ hash: first.hash });
      expect(await startup.resolveSystemKey("configured-key")).toEqual({ hash: sha256Hex("configured-key") });
      // Only the hash is stored, and a configured key is stored nowhere.
      expect(await h.rows("settings")).toEqual([{ key: "system_key_hash", value: first.hash, updatedAt: T0 }]);
    } finally {
      await h.close();
    }
  });

  test.skipIf(skip)(
    "a configured key on a fresh database stores nothing; the first admin from a setup code",
    async () => {
      const h = await open();
      try {
        const { startup, accounts } = storesOf(h);
        const started = await startUp(startup, accounts, { systemKey: "configured-key", admin: undefined });
        expect(started.systemKey).toEqual({ hash: sha256Hex("configured-key") });
        const code = started.bootstrap.setupCode;
        if (code === undefined) throw new Error("no setup code");
        expect(await h.rows("settings")).toEqual([{ key: "setup_code_hash", value: sha256Hex(code), updatedAt: T0 }]);
      } finally {
        await h.close();
      }
    },
  );

  test.skipIf(skip)(
    "five instances starting at once on one database: one organization, one key printed once, one admin",
    async () => {
      const h = await open();
      try {
        const started = await startAtOnce(h, 5, { systemKey: undefined, admin: ADMIN });
        const orgs = await h.rows("organizations");
        const orgId = orgs[0]?.id ?? "";
        expect(orgs.map((o) => o.slug)).toEqual(["default"]);
        expect(new Set(started.map((s) => s.defaultOrg.id))).toEqual(new Set([orgId]));

        const printed = started.flatMap((s) => (s.systemKey.generated === undefined ? [] : [s.systemKey.generated]));
        expect(printed).toHaveLength(1);
        const hash = sha256Hex(printed[0] ?? "");
        expect(started.map((s) => s.systemKey.hash)).toEqual(Array(5).fill(hash));
        expect(await h.rows("settings")).toEqual([{ key: "system_key_hash", value: hash, updatedAt: T0 }]);

        expect(started.filter((s) => s.bootstrap.createdAdmin === "owner@example.com")).toHaveLength(1);
        expect((await h.rows("users")).map((u) => u.email)).toEqual(["owner@example.com"]);
        expect((await h.rows("memberships")).map((m) => [m.orgId, m.role])).toEqual([[orgId, "owner"]]);
      } finally {
        await h.close();
      }
    },
  );

  test.skipIf(skip)(
    "five instances starting at once with no admin configured: one setup code made, the others told so",
    async () => {
      const h = await open();
      try {
        const started = await startAtOnce(h, 5, { systemKey: "configured-key", admin: undefined });
        const codes = started.flatMap((s) => (s.bootstrap.setupCode === undefined ? [] : [s.bootstrap.setupCode]));
        expect(codes).toHaveLength(1);
        expect(started.filter((s) => s.bootstrap.setupCodeElsewhere)).toHaveLength(4);
        expect(await h.rows("settings")).toEqual([
          { key: "setup_code_hash", value: sha256Hex(codes[0] ?? ""), updatedAt: T0 },
        ]);
      } finally {
        await h.close();
      }
    },
  );
});
