/**
 * Device logins in PostgreSQL, through drizzle (server/db-postgres.ts). The same behaviour as the
 * SQLite store, checked by the same suite (test/device-login-store.test.ts). Instances poll and
 * decide at once here, so a poll and a decision each lock their request's row (`SELECT … FOR
 * UPDATE`) before reading its status: a second poll or decision of the same request waits for
 * the first to commit and then reads what it wrote. Two polls of an approved request therefore
 * create one session, and of two decisions one wins and the other is told it was already made.
 */
import { and, eq, lt } from "drizzle-orm";
import {
  formatUserCode,
  generateDeviceCode,
  generateUserCode,
  isWellFormedDeviceCode,
} from "../../core/device-codes.ts";
import { sha256Hex } from "../../core/hash.ts";
import { newId } from "../../core/ids.ts";
import { ok, type Result } from "../../core/result.ts";
import { deviceLogins } from "../../schema/pg-tables.ts";
import type { PgDb, PgTx } from "../db-postgres.ts";
import { createSessionIn } from "./account-store-postgres.ts";
import { writeAudit } from "./admin-audit-postgres.ts";
import {
  approvedAnswer,
  type DecidedDeviceLogin,
  type DeviceDecision,
  type DeviceDecisionError,
  type DeviceLoginRow,
  type DeviceLoginStore,
  type DeviceLoginView,
  type DevicePollAnswer,
  DEVICE_LOGIN_TTL_MS,
  decidable,
  decisionAction,
  EXPIRED,
  KEEP_FINISHED_MS,
  pollOutcome,
  type StartedDeviceLogin,
  toView,
} from "./device-logins.ts";

export class PostgresDeviceLoginStore implements DeviceLoginStore {
  constructor(
    private readonly db: PgDb,
    private readonly now: () => number = Date.now,
  ) {}

  async start(clientName: string): Promise<StartedDeviceLogin> {
    const orm = this.db.orm;
    const now = this.now();
    const deviceCode = generateDeviceCode();
    const expiresAt = now + DEVICE_LOGIN_TTL_MS;
    // Housekeeping in a statement of its own: the insert need not wait on the rows it locks.
    await orm.delete(deviceLogins).where(lt(deviceLogins.expiresAt, now - KEEP_FINISHED_MS));
    // The unique index decides between two instances drawing the same user code: the later
    // insert does nothing and draws again (with 20^8 codes, a second draw is already rare).
    for (;;) {
      const userCode = generateUserCode();
      const [inserted] = await orm
        .insert(deviceLogins)
        .values({
          id: newId("dev"),
          deviceCodeHash: sha256Hex(deviceCode),
          userCode,
          status: "pending",
          clientName,
          createdAt: now,
          expiresAt,
        })
        .onConflictDoNothing({ target: deviceLogins.userCode })
        .returning({ id: deviceLogins.id });
      if (inserted !== undefined) return { deviceCode, userCode: formatUserCode(userCode), expiresAt };
    }
  }

  async poll(deviceCode: string): Promise<DevicePollAnswer> {
    if (!isWellFormedDeviceCode(deviceCode)) return EXPIRED;
    const now = this.now();
    const hash = sha256Hex(deviceCode);
    return this.db.orm.transaction(async (tx): Promise<DevicePollAnswer> => {
      // Found by the SHA-256 of the code (see the SQLite store), and locked until this poll commits.
      const [row] = await tx.select().from(deviceLogins).where(eq(deviceLogins.deviceCodeHash, hash)).for("update");
      const outcome = pollOutcome(row, now);
      if (row === undefined || outcome === null) return EXPIRED;
      await tx.update(deviceLogins).set({ lastPolledAt: now }).where(eq(deviceLogins.id, row.id));
      return outcome.status === "collect" ? collectSession(tx, row, now) : { status: outcome.status };
    });
  }

  async find(userCode: string): Promise<Result<DeviceLoginView, DeviceDecisionError>> {
    const [row] = await this.db.orm.select().from(deviceLogins).where(eq(deviceLogins.userCode, userCode));
    const found = decidable(row, this.now());
    return found.ok ? ok(toView(found.value)) : found;
  }

  async decide(input: DeviceDecision): Promise<Result<DecidedDeviceLogin, DeviceDecisionError>> {
    const now = this.now();
    return this.db.orm.transaction(async (tx): Promise<Result<DecidedDeviceLogin, DeviceDecisionError>> => {
      const [row] = await tx.select().from(deviceLogins).where(eq(deviceLogins.userCode, input.userCode)).for("update");
      const found = decidable(row, now);
      if (!found.ok) return found;
      const status = input.decision === "approve" ? "approved" : "denied";
      await tx
        .update(deviceLogins)
        .set({ status, userId: input.userId, orgId: input.orgId, approvedAt: now })
        .where(and(eq(deviceLogins.id, found.value.id), eq(deviceLogins.status, "pending")));
      await writeAudit(tx, {
        orgId: input.orgId,
        actor: { kind: "user", id: input.userId },
        action: decisionAction(input.decision),
        targetId: found.value.id,
        at: now,
      });
      return ok({ ...toView(found.value), status });
    });
  }
}

/** Marks the request consumed and creates the approver's session, in the poll's transaction. */
async function collectSession(tx: PgTx, row: DeviceLoginRow, now: number): Promise<DevicePollAnswer> {
  if (row.userId === null || row.orgId === null) return EXPIRED;
  const consumed = await tx
    .update(deviceLogins)
    .set({ status: "consumed" })
    .where(and(eq(deviceLogins.id, row.id), eq(deviceLogins.status, "approved")))
    .returning({ id: deviceLogins.id });
  if (consumed.length !== 1) return EXPIRED;
  return approvedAnswer(await createSessionIn(tx, row.userId, row.orgId, now));
}
