/**
 * The device-login store, one suite for both dialects (test/support/dialects.ts): start, poll,
 * lookup, approve, deny, and the session collected exactly once; device codes stored only as
 * hashes; and the races that must have one winner: two decisions of one code at once, several
 * polls of an approved request at once (one session), two first polls of a pending request (one
 * is told to slow down). On PostgreSQL these calls really run at once, on separate connections.
 * test/device-login.test.ts covers the same flow end to end through tRPC, the CLI and the console.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { sha256Hex } from "../core/hash.ts";
import { PostgresAccountStore } from "../server/services/account-store-postgres.ts";
import { SqliteAccountStore } from "../server/services/account-store-sqlite.ts";
import { type AccountStore, sessionHash } from "../server/services/accounts.ts";
import { PostgresDeviceLoginStore } from "../server/services/device-login-store-postgres.ts";
import { SqliteDeviceLoginStore } from "../server/services/device-login-store-sqlite.ts";
import {
  DEVICE_LOGIN_TTL_MS,
  DEVICE_POLL_INTERVAL_SECONDS,
  type DeviceLoginStore,
  type DevicePollAnswer,
} from "../server/services/device-logins.ts";
import { type DialectHarness, dialects, stopPostgres } from "./support/dialects.ts";

const T0 = Date.UTC(2031, 4, 6, 12, 0, 0);
const ORG_A = { id: "org_a", slug: "clinic-a" };
const ORG_B = { id: "org_b", slug: "clinic-b" };
const POLL_MS = DEVICE_POLL_INTERVAL_SECONDS * 1000;

type Clock = { now: number };

function storesOf(h: DialectHarness, clock: Clock): { devices: DeviceLoginStore; accounts: AccountStore } {
  const now = () => clock.now;
  return h.dialect === "sqlite"
    ? { devices: new SqliteDeviceLoginStore(h.db, now), accounts: new SqliteAccountStore(h.db, now) }
    : { devices: new PostgresDeviceLoginStore(h.db, now), accounts: new PostgresAccountStore(h.db, now) };
}

const plain = (userCode: string) => userCode.replace("-", "");

afterAll(stopPostgres);

describe.each(dialects("the device-login store tests"))("device logins on $name", ({ skip, open }) => {
  const clock: Clock = { now: T0 };
  let h: DialectHarness;
  let devices: DeviceLoginStore;
  let accounts: AccountStore;
  /** The approving admins: one in each organization. */
  const approver = { a: "", b: "" };

  beforeAll(async () => {
    if (skip) return;
    h = await open();
    ({ devices, accounts } = storesOf(h, clock));
    await h.addOrg(ORG_A);
    await h.addOrg(ORG_B);
    const hash = "$argon2id$not-checked";
    const a = await accounts.createUser({ email: "a@example.com", passwordHash: hash, orgId: ORG_A.id, role: "owner" });
    const b = await accounts.createUser({
      email: "b@example.com",
      passwordHash: hash,
      orgId: ORG_B.id,
      role: "member",
    });
    if (!a.ok || !b.ok) throw new Error("approvers not created");
    approver.a = a.value.id;
    approver.b = b.value.id;
  });
  afterAll(async () => {
    await h?.close();
  });
  beforeEach(() => {
    clock.now += 60 * 60_000;
  });

  const approve = (userCode: string, who: "a" | "b" = "a") =>
    devices.decide({
      userCode: plain(userCode),
      decision: "approve",
      userId: approver[who],
      orgId: who === "a" ? ORG_A.id : ORG_B.id,
    });
  const deny = (userCode: string) =>
    devices.decide({ userCode: plain(userCode), decision: "deny", userId: approver.a, orgId: ORG_A.id });
  const rowOf = async (userCode: string) =>
    (await h.rows("deviceLogins")).find((row) => row.userCode === plain(userCode));
  const audits = async (targetId: string | undefined) =>
    (await h.rows("adminAudit")).filter((row) => row.targetId === targetId).map((row) => row.action);

  test.skipIf(skip)("start: a secret device code and a user code; only the device code's hash is stored", async () => {
    const started = await devices.start("health CLI on build-01");
    expect(started).toEqual({
      deviceCode: expect.stringMatching(/^hdc_[0-9A-Za-z]{40}$/),
      userCode: expect.stringMatching(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/),
      expiresAt: clock.now + DEVICE_LOGIN_TTL_MS,
    });
    expect(await rowOf(started.userCode)).toEqual({
      id: expect.stringMatching(/^dev_/),
      deviceCodeHash: sha256Hex(started.deviceCode),
      userCode: plain(started.userCode),
      status: "pending",
      clientName: "health CLI on build-01",
      userId: null,
      orgId: null,
      createdAt: clock.now,
      expiresAt: clock.now + DEVICE_LOGIN_TTL_MS,
      approvedAt: null,
      lastPolledAt: null,
    });
    expect(JSON.stringify(await h.rows("deviceLogins"))).not.toContain(started.deviceCode);
    expect(await devices.find(plain(started.userCode))).toEqual({
      ok: true,
      value: {
        userCode: started.userCode,
        clientName: "health CLI on build-01",
        createdAt: new Date(clock.now).toISOString(),
        expiresAt: new Date(clock.now + DEVICE_LOGIN_TTL_MS).toISOString(),
      },
    });
  });

  test.skipIf(skip)(
    "pending, slow_down when polled too fast, approved once with a session of the approver, then expired",
    async () => {
      const started = await devices.start("cli");
      expect(await devices.poll(started.deviceCode)).toEqual({ status: "pending" });
      clock.now += POLL_MS - 1;
      expect(await devices.poll(started.deviceCode)).toEqual({ status: "slow_down" });
      clock.now += POLL_MS;
      expect(await devices.poll(started.deviceCode)).toEqual({ status: "pending" });

      const decidedAt = clock.now;
      expect(await approve(started.userCode, "b")).toEqual({
        ok: true,
        value: expect.objectContaining({ userCode: started.userCode, status: "approved" }),
      });
      expect(await rowOf(started.userCode)).toMatchObject({
        status: "approved",
        userId: approver.b,
        orgId: ORG_B.id,
        approvedAt: decidedAt,
      });
      // A decided request answers at once, even sooner than the interval.
      clock.now += 1;
      const answer = await devices.poll(started.deviceCode);
      if (answer.status !== "approved") throw new Error(`expected approved, got ${answer.status}`);
      expect(answer.expiresAt).toBe(new Date(clock.now + 7 * 24 * 60 * 60 * 1000).toISOString());
      expect(await accounts.resolveSession(sessionHash(answer.sessionToken) ?? "")).toMatchObject({
        userId: approver.b,
        orgId: ORG_B.id,
        role: "member",
      });
      expect(await devices.poll(started.deviceCode)).toEqual({ status: "expired" });
      expect((await rowOf(started.userCode))?.status).toBe("consumed");
      expect(await approve(started.userCode)).toEqual({ ok: false, error: "already_approved" });
      expect(await devices.find(plain(started.userCode))).toEqual({ ok: false, error: "already_approved" });
      const id = (await rowOf(started.userCode))?.id;
      expect(await audits(id)).toEqual(["device_login.approve"]);
      expect((await h.rows("adminAudit")).filter((a) => a.action === "device_login.approve").at(-1)).toMatchObject({
        orgId: ORG_B.id,
        actorId: approver.b,
      });
    },
  );

  test.skipIf(skip)("deny: the poll says denied, no session is made, and a second decision is refused", async () => {
    const started = await devices.start("cli");
    const sessions = (await h.rows("sessions")).length;
    expect(await deny(started.userCode)).toMatchObject({ ok: true, value: { status: "denied" } });
    expect(await devices.poll(started.deviceCode)).toEqual({ status: "denied" });
    expect(await devices.poll(started.deviceCode)).toEqual({ status: "denied" });
    expect(await h.rows("sessions")).toHaveLength(sessions);
    expect(await approve(started.userCode)).toEqual({ ok: false, error: "already_denied" });
    expect(await devices.find(plain(started.userCode))).toEqual({ ok: false, error: "already_denied" });
    expect(await audits((await rowOf(started.userCode))?.id)).toEqual(["device_login.deny"]);
  });

  test.skipIf(skip)("expired, unknown and malformed codes: nothing to decide, and polls say expired", async () => {
    const started = await devices.start("cli");
    clock.now += DEVICE_LOGIN_TTL_MS;
    expect(await devices.find(plain(started.userCode))).toEqual({ ok: false, error: "expired" });
    expect(await approve(started.userCode)).toEqual({ ok: false, error: "expired" });
    expect(await devices.poll(started.deviceCode)).toEqual({ status: "expired" });
    expect(await rowOf(started.userCode)).toMatchObject({ status: "pending", lastPolledAt: null });
    expect(await devices.find("BBBBBBBB")).toEqual({ ok: false, error: "not_found" });
    expect(await approve("BBBB-BBBB")).toEqual({ ok: false, error: "not_found" });
    expect(await devices.poll(`hdc_${"A".repeat(40)}`)).toEqual({ status: "expired" });
    expect(await devices.poll("not a device code")).toEqual({ status: "expired" });
    expect(await audits((await rowOf(started.userCode))?.id)).toEqual([]);
  });

  test.skipIf(skip)("a start deletes requests that ended more than a day ago, and keeps younger ones", async () => {
    const old = await devices.start("old");
    clock.now += DEVICE_LOGIN_TTL_MS + 24 * 60 * 60_000 - 1;
    const young = await devices.start("young");
    expect(await rowOf(old.userCode)).toBeDefined();
    clock.now += 2;
    await devices.start("sweeper");
    expect(await rowOf(old.userCode)).toBeUndefined();
    expect(await rowOf(young.userCode)).toBeDefined();
  });

  test.skipIf(skip)("starts at once: every request gets its own device code and user code", async () => {
    const started = await Promise.all(Array.from({ length: 20 }, (_, i) => devices.start(`cli ${i}`)));
    expect(new Set(started.map((s) => s.userCode)).size).toBe(20);
    expect(new Set(started.map((s) => s.deviceCode)).size).toBe(20);
    for (const s of started) expect(await rowOf(s.userCode)).toMatchObject({ deviceCodeHash: sha256Hex(s.deviceCode) });
  });

  test.skipIf(skip)("decisions at once: exactly one wins, the others are told, and one is audited", async () => {
    for (const race of [
      ["approve", "approve"],
      ["approve", "deny"],
      ["deny", "approve", "deny"],
    ] as const) {
      const started = await devices.start("raced");
      const results = await Promise.all(
        race.map((d) => (d === "approve" ? approve(started.userCode) : deny(started.userCode))),
      );
      const winners = results.flatMap((r) => (r.ok ? [r.value.status] : []));
      expect(winners).toHaveLength(1);
      const expected = winners[0] === "approved" ? "already_approved" : "already_denied";
      expect(results.filter((r) => !r.ok)).toEqual(Array(race.length - 1).fill({ ok: false, error: expected }));
      const row = await rowOf(started.userCode);
      expect(row?.status).toBe(winners[0]);
      expect(await audits(row?.id)).toHaveLength(1);
    }
  });

  test.skipIf(skip)("polls of an approved request at once: one gets the session, the others expired", async () => {
    const started = await devices.start("raced");
    expect((await approve(started.userCode)).ok).toBe(true);
    const sessions = (await h.rows("sessions")).length;
    const answers: DevicePollAnswer[] = await Promise.all(
      Array.from({ length: 8 }, () => devices.poll(started.deviceCode)),
    );
    expect(answers.filter((a) => a.status === "approved")).toHaveLength(1);
    expect(answers.filter((a) => a.status === "expired")).toHaveLength(7);
    expect(await h.rows("sessions")).toHaveLength(sessions + 1);
    expect((await rowOf(started.userCode))?.status).toBe("consumed");
  });

  test.skipIf(skip)("two first polls of a pending request at once: one pending, one told to slow down", async () => {
    const started = await devices.start("eager");
    const answers = await Promise.all([devices.poll(started.deviceCode), devices.poll(started.deviceCode)]);
    expect(answers.map((a) => a.status).sort()).toEqual(["pending", "slow_down"]);
    expect((await rowOf(started.userCode))?.lastPolledAt).toBe(clock.now);
  });
});
