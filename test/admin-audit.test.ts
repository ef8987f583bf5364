/**
 * The admin audit, one suite for both dialects (test/support/dialects.ts): what `AdminAudit`
 * records itself. The rows the other stores write in their own transactions are checked by their
 * suites (token-store, account-store, device-login-store). PostgreSQL's half skips, saying so,
 * where it is not installed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { AdminAudit } from "../server/services/admin-audit.ts";
import { PostgresAdminAudit } from "../server/services/admin-audit-postgres.ts";
import { SqliteAdminAudit } from "../server/services/admin-audit-sqlite.ts";
import { type DialectHarness, dialects, stopPostgres } from "./support/dialects.ts";

const T0 = Date.UTC(2031, 4, 6, 12, 0, 0);
const ORG_A = { id: "org_a" };
const ORG_B = { id: "org_b" };

type Clock = { now: number };

function auditOf(h: DialectHarness, clock: Clock): AdminAudit {
  const now = () => clock.now;
  return h.dialect === "sqlite" ? new SqliteAdminAudit(h.db, now) : new PostgresAdminAudit(h.db, now);
}

afterAll(stopPostgres);

describe.each(dialects("the admin audit tests"))("the admin audit on $name", ({ skip, open }) => {
  const clock: Clock = { now: T0 };
  let h: DialectHarness;

  beforeAll(async () => {
    if (skip) return;
    h = await open();
  });
  afterAll(async () => {
    await h?.close();
  });

  test.skipIf(skip)(
    "one row per action recorded, at the store's time, in order, organizations kept apart",
    async () => {
      const audit = auditOf(h, clock);
      await audit.record({
        orgId: ORG_A.id,
        actor: { kind: "user", id: "usr_1" },
        action: "run.terminate",
        targetId: "run_1",
      });
      clock.now += 1;
      await audit.record({
        orgId: ORG_B.id,
        actor: { kind: "system", id: "system" },
        action: "token.create",
        targetId: null,
      });
      const rows = await h.rows("adminAudit");
      expect(rows).toEqual([
        {
          id: expect.any(Number),
          orgId: ORG_A.id,
          actorKind: "user",
          actorId: "usr_1",
          action: "run.terminate",
          targetId: "run_1",
          at: T0,
        },
        {
          id: expect.any(Number),
          orgId: ORG_B.id,
          actorKind: "system",
          actorId: "system",
          action: "token.create",
          targetId: null,
          at: T0 + 1,
        },
      ]);
      expect(rows[0]?.id).toBeLessThan(rows[1]?.id ?? 0);
    },
  );
});
