/**
 * Device-link sign-in for `health login` (RFC 8628, the OAuth device authorization grant, adapted
 * to admin sessions). The CLI starts a request and shows a short user code; a signed-in admin
 * approves (or denies) that code in the console; the CLI, polling with its secret device code,
 * then receives a new session of the approving admin, exactly once.
 *
 * Nothing secret is stored in clear: the device code only as its SHA-256, and the session is
 * created when the CLI collects it, so no session secret waits in the table. Expected failures
 * are values; the tRPC layer turns them into errors.
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
import { err, ok, type Result } from "../../core/result.ts";
import { deviceLogins } from "../../schema/tables.ts";
import type { Db } from "../db.ts";
import { createSessionIn } from "./account-store-sqlite.ts";
import { writeAudit } from "./admin-audit-sqlite.ts";
import { type EventWindow, SlidingWindow } from "./sliding-window.ts";

/** How long a person has to approve (RFC 8628 suggests minutes, not hours). */
export const DEVICE_LOGIN_TTL_MS = 10 * 60 * 1000;
/** The slowest poll rate a client is asked to keep; faster polls of a pending request get `slow_down`. */
export const DEVICE_POLL_INTERVAL_SECONDS = 5;
export const DEFAULT_CLIENT_NAME = "health CLI";
// Finished requests are kept a day, so an admin who opens an old link is told it expired.
const KEEP_FINISHED_MS = 24 * 60 * 60 * 1000;

type DeviceLoginRow = typeof deviceLogins.$inferSelect;

export interface StartedDeviceLogin {
  deviceCode: string;
  /** Formatted for people: `XXXX-XXXX`. */
  userCode: string;
  expiresAt: number;
}

/** A new pending request. Old finished ones are deleted on the way, which keeps the table small. */
export function startDeviceLogin(db: Db, clientName: string, now = Date.now()): StartedDeviceLogin {
  const deviceCode = generateDeviceCode();
  const expiresAt = now + DEVICE_LOGIN_TTL_MS;
  const userCode = db.sqlite.transaction((): string => {
    db.orm
      .delete(deviceLogins)
      .where(lt(deviceLogins.expiresAt, now - KEEP_FINISHED_MS))
      .run();
    const code = unusedUserCode(db);
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
  })();
  return { deviceCode, userCode: formatUserCode(userCode), expiresAt };
}

/** User codes are unique in the table; with 20^8 of them a second draw is already rare. */
function unusedUserCode(db: Db): string {
  for (;;) {
    const code = generateUserCode();
    const taken = db.orm
      .select({ id: deviceLogins.id })
      .from(deviceLogins)
      .where(eq(deviceLogins.userCode, code))
      .get();
    if (taken === undefined) return code;
  }
}

export type DevicePollAnswer =
  | { status: "pending" }
  | { status: "slow_down" }
  | { status: "approved"; sessionToken: string; expiresAt: string }
  | { status: "denied" }
  | { status: "expired" };

const EXPIRED = { status: "expired" } as const;

/**
 * One poll of the CLI. An unknown, malformed or already collected code answers `expired`, like a
 * stale one, so polling reveals nothing about other requests. Polling a pending request faster
 * than the interval answers `slow_down` (RFC 8628 §3.5); a decided request answers at once.
 */
export function pollDeviceLogin(db: Db, deviceCode: string, now = Date.now()): DevicePollAnswer {
  if (!isWellFormedDeviceCode(deviceCode)) return EXPIRED;
  const hash = sha256Hex(deviceCode);
  return db.sqlite.transaction((): DevicePollAnswer => {
    // Found by the SHA-256 of the code: an exact index lookup of a hash, so comparing the stored
    // hash again (constant-time or not) would add nothing; timing reveals nothing of the code.
    const row = db.orm.select().from(deviceLogins).where(eq(deviceLogins.deviceCodeHash, hash)).get();
    if (row === undefined) return EXPIRED;
    if (row.status === "consumed" || row.expiresAt <= now) return EXPIRED;
    db.orm.update(deviceLogins).set({ lastPolledAt: now }).where(eq(deviceLogins.id, row.id)).run();
    switch (row.status) {
      case "pending": {
        const tooSoon = row.lastPolledAt !== null && now - row.lastPolledAt < DEVICE_POLL_INTERVAL_SECONDS * 1000;
        return tooSoon ? { status: "slow_down" } : { status: "pending" };
      }
      case "denied":
        return { status: "denied" };
      case "approved":
        return collectSession(db, row);
    }
  })();
}

/** Marks the request consumed and creates the approver's session: inside the poll's transaction, so once. */
function collectSession(db: Db, row: DeviceLoginRow): DevicePollAnswer {
  if (row.userId === null || row.orgId === null) return EXPIRED;
  const consumed = db.orm
    .update(deviceLogins)
    .set({ status: "consumed" })
    .where(and(eq(deviceLogins.id, row.id), eq(deviceLogins.status, "approved")))
    .returning({ id: deviceLogins.id })
    .all();
  if (consumed.length !== 1) return EXPIRED;
  const session = createSessionIn(db, row.userId, row.orgId, Date.now());
  return { status: "approved", sessionToken: session.token, expiresAt: new Date(session.expiresAt).toISOString() };
}

/** What the approval page shows: derived from `toView`, the one place that shapes it. */
export type DeviceLoginView = ReturnType<typeof toView>;

/** Why a code cannot be approved or denied: unknown, too old, or someone already decided. */
export type DeviceDecisionError = "not_found" | "expired" | "already_approved" | "already_denied";

function toView(row: DeviceLoginRow) {
  return {
    userCode: formatUserCode(row.userCode),
    clientName: row.clientName,
    createdAt: new Date(row.createdAt).toISOString(),
    expiresAt: new Date(row.expiresAt).toISOString(),
  };
}

function pendingRow(db: Db, userCode: string, now: number): Result<DeviceLoginRow, DeviceDecisionError> {
  const row = db.orm.select().from(deviceLogins).where(eq(deviceLogins.userCode, userCode)).get();
  if (row === undefined) return err("not_found");
  switch (row.status) {
    case "approved":
    case "consumed":
      return err("already_approved");
    case "denied":
      return err("already_denied");
    case "pending":
      return row.expiresAt <= now ? err("expired") : ok(row);
  }
}

/** `userCode` is normalised (`BCDFGHJK`); the input schema does that. */
export function findDeviceLogin(
  db: Db,
  userCode: string,
  now = Date.now(),
): Result<DeviceLoginView, DeviceDecisionError> {
  const found = pendingRow(db, userCode, now);
  return found.ok ? ok(toView(found.value)) : found;
}

export interface DeviceDecision {
  userCode: string;
  decision: "approve" | "deny";
  /** The signed-in admin deciding; an approval signs the CLI in as this user, in this organization. */
  userId: string;
  orgId: string;
}

export function decideDeviceLogin(
  db: Db,
  input: DeviceDecision,
  now = Date.now(),
): Result<DeviceLoginView & { status: "approved" | "denied" }, DeviceDecisionError> {
  return db.sqlite.transaction((): Result<DeviceLoginView & { status: "approved" | "denied" }, DeviceDecisionError> => {
    const found = pendingRow(db, input.userCode, now);
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
      action: input.decision === "approve" ? "device_login.approve" : "device_login.deny",
      targetId: found.value.id,
      at: now,
    });
    return ok({ ...toView(found.value), status });
  })();
}

/** Device-link starts allowed per client address in the window. */
export const DEVICE_STARTS = { max: 10, windowMs: 60 * 1000 } as const;

/**
 * Device-link starts per client address in a sliding window, like the sign-in limiter (in
 * memory, or in Redis shared by every instance): starting is unauthenticated, and each start
 * writes a row.
 */
export class DeviceStartLimiter {
  constructor(private readonly starts: EventWindow = new SlidingWindow(DEVICE_STARTS.max, DEVICE_STARTS.windowMs)) {}

  /** Counts one start for `key`; false (and nothing counted) when the window is already full. */
  async take(key: string, now = Date.now()): Promise<boolean> {
    return await this.starts.take(key, now);
  }
}
