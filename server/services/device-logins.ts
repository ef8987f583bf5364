/**
 * Device-link sign-in for `health login` (RFC 8628, the OAuth device authorization grant, adapted
 * to admin sessions). The CLI starts a request and shows a short user code; a signed-in admin
 * approves (or denies) that code in the console; the CLI, polling with its secret device code,
 * then receives a new session of the approving admin, exactly once.
 *
 * Nothing secret is stored in clear: the device code only as its SHA-256, and the session is
 * created when the CLI collects it, so no session secret waits in the table. Expected failures
 * are values; the tRPC layer turns them into errors.
 *
 * What a store of device logins does, whatever the database, is `DeviceLoginStore`:
 * device-login-store-sqlite.ts (the server's) and device-login-store-postgres.ts, one suite over
 * both (test/device-login-store.test.ts). What a row means (which answer a poll gets, whether a
 * code can still be decided) is decided here, once, for both.
 */
import { formatUserCode } from "../../core/device-codes.ts";
import { err, ok, type Result } from "../../core/result.ts";
import type { deviceLogins } from "../../schema/tables.ts";
import type { CreatedSession } from "./accounts.ts";
import { type EventWindow, SlidingWindow } from "./sliding-window.ts";

/** How long a person has to approve (RFC 8628 suggests minutes, not hours). */
export const DEVICE_LOGIN_TTL_MS = 10 * 60 * 1000;
/** The slowest poll rate a client is asked to keep; faster polls of a pending request get `slow_down`. */
export const DEVICE_POLL_INTERVAL_SECONDS = 5;
export const DEFAULT_CLIENT_NAME = "health CLI";
/** Finished requests are kept a day, so an admin who opens an old link is told it expired. */
export const KEEP_FINISHED_MS = 24 * 60 * 60 * 1000;

/** Both dialects' tables infer this same row (test/schema-dialects.test.ts). */
export type DeviceLoginRow = typeof deviceLogins.$inferSelect;

export interface StartedDeviceLogin {
  deviceCode: string;
  /** Formatted for people: `XXXX-XXXX`. */
  userCode: string;
  expiresAt: number;
}

export type DevicePollAnswer =
  | { status: "pending" }
  | { status: "slow_down" }
  | { status: "approved"; sessionToken: string; expiresAt: string }
  | { status: "denied" }
  | { status: "expired" };

export const EXPIRED = { status: "expired" } as const;

/** What the approval page shows: derived from `toView`, the one place that shapes it. */
export type DeviceLoginView = ReturnType<typeof toView>;

/** Why a code cannot be approved or denied: unknown, too old, or someone already decided. */
export type DeviceDecisionError = "not_found" | "expired" | "already_approved" | "already_denied";

export interface DeviceDecision {
  /** Normalised (`BCDFGHJK`); the input schema does that. */
  userCode: string;
  decision: "approve" | "deny";
  /** The signed-in admin deciding; an approval signs the CLI in as this user, in this organization. */
  userId: string;
  orgId: string;
}

export type DecidedDeviceLogin = DeviceLoginView & { status: "approved" | "denied" };

export interface DeviceLoginStore {
  /** A new pending request. Old finished ones are deleted on the way, which keeps the table small. */
  start(clientName: string): Promise<StartedDeviceLogin>;
  /**
   * One poll of the CLI. An unknown, malformed or already collected code answers `expired`, like a
   * stale one, so polling reveals nothing about other requests. Polling a pending request faster
   * than the interval answers `slow_down` (RFC 8628 §3.5); a decided request answers at once. An
   * approved request is consumed and its session created in one transaction: of two polls at
   * once, exactly one gets the session.
   */
  poll(deviceCode: string): Promise<DevicePollAnswer>;
  /** The pending request with this user code, for the approval page. */
  find(userCode: string): Promise<Result<DeviceLoginView, DeviceDecisionError>>;
  /** Approves or denies a pending request, audited; of two decisions at once, exactly one wins. */
  decide(input: DeviceDecision): Promise<Result<DecidedDeviceLogin, DeviceDecisionError>>;
}

export function toView(row: DeviceLoginRow) {
  return {
    userCode: formatUserCode(row.userCode),
    clientName: row.clientName,
    createdAt: new Date(row.createdAt).toISOString(),
    expiresAt: new Date(row.expiresAt).toISOString(),
  };
}

/** Whether the request can still be decided, and if not, why. */
export function decidable(row: DeviceLoginRow | undefined, now: number): Result<DeviceLoginRow, DeviceDecisionError> {
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

/**
 * What a poll of this row answers, before any session is collected: `collect` for an approved
 * request, which the store then consumes. Null means the poll is not even recorded (the request
 * is gone for the CLI).
 */
export function pollOutcome(
  row: DeviceLoginRow | undefined,
  now: number,
): { status: "pending" | "slow_down" | "denied" | "collect" } | null {
  if (row === undefined || row.status === "consumed" || row.expiresAt <= now) return null;
  switch (row.status) {
    case "pending": {
      const tooSoon = row.lastPolledAt !== null && now - row.lastPolledAt < DEVICE_POLL_INTERVAL_SECONDS * 1000;
      return { status: tooSoon ? "slow_down" : "pending" };
    }
    case "denied":
      return { status: "denied" };
    case "approved":
      return { status: "collect" };
  }
}

/** The answer of the poll that collected its session. */
export function approvedAnswer(session: CreatedSession): DevicePollAnswer {
  return { status: "approved", sessionToken: session.token, expiresAt: new Date(session.expiresAt).toISOString() };
}

/** The audit action of a decision. */
export const decisionAction = (decision: DeviceDecision["decision"]) =>
  decision === "approve" ? ("device_login.approve" as const) : ("device_login.deny" as const);

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
