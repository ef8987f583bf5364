/**
 * Device logins in the SQLite database: the server's store, with the statements it ran before the
 * store had an interface. Each operation is one synchronous transaction, never interleaved with
 * another call, so a poll or a decision reads and writes its row with no one in between.
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
import { deviceLogins } from "../../schema/tables.ts";
import type { Db } from "../db.ts";
import { createSessionIn } from "./account-store-sqlite.ts";
import { writeAudit } from "./admin-audit-sqlite.ts";
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

export class SqliteDeviceLoginStore implements DeviceLoginStore {
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  async start(clientName: string): Promise<StartedDeviceLogin> {
    const db = this.db;
    const now = this.now();
    const deviceCode = generateDeviceCode();
    const expiresAt = now + DEVICE_LOGIN_TTL_MS;
    const userCode = db.sqlite
      .transaction((): string => {
        db.orm
          .delete(deviceLogins)
          .where(lt(deviceLogins.expiresAt, now - KEEP_FINISHED_MS))
          .run();
        const code = this.unusedUserCode();
        db.orm
          .insert(deviceLogins)
          .values({
            id: newId("dev"),
            deviceCodeHash: sha256Hex(deviceCode),
            userCode: code,
            status: "pending",
            clientName,
            createdAt: now,
            expiresAt,
          })
          .run();
        return code;
      })
      .immediate();
    return { deviceCode, userCode: formatUserCode(userCode), expiresAt };
  }

  /** User codes are unique in the table; with 20^8 of them a second draw is already rare. */
  private unusedUserCode(): string {
    for (;;) {
      const code = generateUserCode();
      const taken = this.db.orm
        .select({ id: deviceLogins.id })
        .from(deviceLogins)
        .where(eq(deviceLogins.userCode, code))
        .get();
      if (taken === undefined) return code;
    }
  }

  async poll(deviceCode: string): Promise<DevicePollAnswer> {
    if (!isWellFormedDeviceCode(deviceCode)) return EXPIRED;
    const db = this.db;
    const now = this.now();
    const hash = sha256Hex(deviceCode);
    return db.sqlite
      .transaction((): DevicePollAnswer => {
        // Found by the SHA-256 of the code: an exact index lookup of a hash, so comparing the stored
        // hash again (constant-time or not) would add nothing; timing reveals nothing of the code.
        const row = db.orm.select().from(deviceLogins).where(eq(deviceLogins.deviceCodeHash, hash)).get();
        const outcome = pollOutcome(row, now);
        if (row === undefined || outcome === null) return EXPIRED;
        db.orm.update(deviceLogins).set({ lastPolledAt: now }).where(eq(deviceLogins.id, row.id)).run();
        return outcome.status === "collect" ? this.collectSession(row, now) : { status: outcome.status };
      })
      .immediate();
  }

  /** Marks the request consumed and creates the approver's session: inside the poll's transaction, so once. */
  private collectSession(row: DeviceLoginRow, now: number): DevicePollAnswer {
    if (row.userId === null || row.orgId === null) return EXPIRED;
    const consumed = this.db.orm
      .update(deviceLogins)
      .set({ status: "consumed" })
      .where(and(eq(deviceLogins.id, row.id), eq(deviceLogins.status, "approved")))
      .returning({ id: deviceLogins.id })
      .all();
    if (consumed.length !== 1) return EXPIRED;
    return approvedAnswer(createSessionIn(this.db, row.userId, row.orgId, now));
  }

  private pendingRow(userCode: string, now: number): Result<DeviceLoginRow, DeviceDecisionError> {
    return decidable(this.db.orm.select().from(deviceLogins).where(eq(deviceLogins.userCode, userCode)).get(), now);
  }

  async find(userCode: string): Promise<Result<DeviceLoginView, DeviceDecisionError>> {
    const found = this.pendingRow(userCode, this.now());
    return found.ok ? ok(toView(found.value)) : found;
  }

  async decide(input: DeviceDecision): Promise<Result<DecidedDeviceLogin, DeviceDecisionError>> {
    const db = this.db;
    const now = this.now();
    return db.sqlite
      .transaction((): Result<DecidedDeviceLogin, DeviceDecisionError> => {
        const found = this.pendingRow(input.userCode, now);
        if (!found.ok) return found;
        const status = input.decision === "approve" ? "approved" : "denied";
        db.orm
          .update(deviceLogins)
          .set({ status, userId: input.userId, orgId: input.orgId, approvedAt: now })
          .where(and(eq(deviceLogins.id, found.value.id), eq(deviceLogins.status, "pending")))
          .run();
        writeAudit(db, {
          orgId: input.orgId,
          actor: { kind: "user", id: input.userId },
          action: decisionAction(input.decision),
          targetId: found.value.id,
          at: now,
        });
        return ok({ ...toView(found.value), status });
      })
      .immediate();
  }
}
