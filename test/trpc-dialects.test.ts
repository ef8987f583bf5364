/**
 * The tRPC mount over either database: the session of an admin request resolved through the
 * dialect's account store (a promise on both, awaited in the context), and `usage.summary`
 * answered by the dialect's usage reader. A deleted session is refused on the next call.
 * PostgreSQL's half skips, saying so, where it is not installed.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { PostgresAccountStore } from "../server/services/account-store-postgres.ts";
import { SqliteAccountStore } from "../server/services/account-store-sqlite.ts";
import { type AccountStore, LoginLimiter } from "../server/services/accounts.ts";
import { PostgresAdminAudit } from "../server/services/admin-audit-postgres.ts";
import { SqliteAdminAudit } from "../server/services/admin-audit-sqlite.ts";
import { PostgresDeviceLoginStore } from "../server/services/device-login-store-postgres.ts";
import { SqliteDeviceLoginStore } from "../server/services/device-login-store-sqlite.ts";
import { DeviceStartLimiter } from "../server/services/device-logins.ts";
import { PostgresTokenStore } from "../server/services/token-store-postgres.ts";
import { SqliteTokenStore } from "../server/services/token-store-sqlite.ts";
import { createUsageReader } from "../server/services/usage.ts";
import { postgresUsageReader } from "../server/services/usage-reader-postgres.ts";
import { type TrpcHandlerOptions, trpcHandler } from "../server/trpc/handler.ts";
import { type DialectHarness, dialects, stopPostgres } from "./support/dialects.ts";

const ORG = { id: "org_a", slug: "clinic-a" };

afterAll(stopPostgres);

function optionsOf(h: DialectHarness): TrpcHandlerOptions & { accounts: AccountStore } {
  const common = {
    defaultOrg: ORG,
    loginLimiter: new LoginLimiter(),
    deviceStartLimiter: new DeviceStartLimiter(),
    // Neither is asked by the procedures called here.
    engine: {} as never,
    catalog: {} as never,
  };
  if (h.dialect === "sqlite") {
    return {
      ...common,
      accounts: new SqliteAccountStore(h.db),
      tokens: new SqliteTokenStore(h.db),
      deviceLogins: new SqliteDeviceLoginStore(h.db),
      adminAudit: new SqliteAdminAudit(h.db),
      usageReader: createUsageReader(h.db.sqlite),
    };
  }
  return {
    ...common,
    accounts: new PostgresAccountStore(h.db),
    tokens: new PostgresTokenStore(h.db),
    deviceLogins: new PostgresDeviceLoginStore(h.db),
    adminAudit: new PostgresAdminAudit(h.db),
    usageReader: postgresUsageReader(h.db),
  };
}

describe.each(dialects("the tRPC mount tests"))("tRPC over $name", ({ skip, open }) => {
  test.skipIf(skip)("a session signs an admin in, usage.summary answers, a deleted session is refused", async () => {
    const h = await open();
    try {
      await h.addOrg(ORG);
      const options = optionsOf(h);
      const handler = trpcHandler(options);
      const created = await options.accounts.createUser({
        email: "ada@example.com",
        passwordHash: "x",
        orgId: ORG.id,
        role: "owner",
      });
      if (!created.ok) throw new Error("the user was not created");
      const session = await options.accounts.createSession(created.value.id);
      const call = (path: string, secret: string) =>
        handler(
          new Request(`http://gateway/trpc/${path}`, { headers: { authorization: `Bearer ${secret}` } }),
          "127.0.0.1",
        );

      const me = await call("auth.me", session.token);
      expect(me.status).toBe(200);
      expect(((await me.json()) as { result: { data: unknown } }).result.data).toMatchObject({
        org: { id: ORG.id, slug: ORG.slug },
      });
      const usage = await call(
        `usage.summary?input=${encodeURIComponent(JSON.stringify({ window: "1h" }))}`,
        session.token,
      );
      expect(usage.status).toBe(200);
      expect(((await usage.json()) as { result: { data: unknown } }).result.data).toMatchObject({
        window: "1h",
        planning: { requests: 0 },
        runs: { inFlight: 0, queued: 0 },
      });

      const [stored] = await h.rows("sessions");
      if (stored === undefined) throw new Error("no session row");
      await options.accounts.deleteSession(stored.id);
      expect((await call("auth.me", session.token)).status).toBe(401);
    } finally {
      await h.close();
    }
  });
});
