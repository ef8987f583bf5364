/** The in-memory limiters of sign-in and device-link starts: one sliding-window implementation. */
import { describe, expect, test } from "bun:test";
import { DeviceStartLimiter } from "../server/services/device-logins.ts";
import { LOGIN_FAILURES, LoginLimiter } from "../server/services/accounts.ts";
import { SlidingWindow } from "../server/services/sliding-window.ts";

const MINUTE = 60_000;

describe("sign-in limiter", () => {
  test("blocks a key after 5 failures in 15 minutes; a success or the window's end clears it", async () => {
    const limiter = new LoginLimiter();
    const t0 = 1_800_000_000_000;
    for (let i = 0; i < 5; i++) await limiter.fail(["email:a@example.com", "ip:10.0.0.1"], t0 + i);
    expect(await limiter.blocked(["email:a@example.com"], t0 + 10)).toBe(true);
    expect(await limiter.blocked(["email:b@example.com", "ip:10.0.0.1"], t0 + 10)).toBe(true);
    expect(await limiter.blocked(["email:a@example.com"], t0 + 15 * MINUTE + 5)).toBe(false);
    await limiter.succeed(["ip:10.0.0.1"]);
    expect(await limiter.blocked(["ip:10.0.0.1"], t0 + 10)).toBe(false);
  });

  test("forgets keys whose failures left the window: 50,000 distinct emails do not stay a day later", async () => {
    const failures = new SlidingWindow(LOGIN_FAILURES.max, LOGIN_FAILURES.windowMs);
    const limiter = new LoginLimiter(failures);
    const t0 = 1_800_000_000_000;
    for (let i = 0; i < 50_000; i++) await limiter.fail([`email:user${i}@example.com`], t0 + i);
    expect(failures.size).toBe(50_000);
    await limiter.fail(["email:late@example.com"], t0 + 24 * 60 * MINUTE);
    expect(failures.size).toBe(1);
  });
});

describe("device-link start limiter", () => {
  test("10 starts a minute per address, then refused without counting; the next minute is open", async () => {
    const limiter = new DeviceStartLimiter();
    const t0 = 1_800_000_000_000;
    const taken = [];
    for (let i = 0; i < 12; i++) taken.push(await limiter.take("10.0.0.2", t0 + i));
    expect(taken).toEqual([...Array.from({ length: 10 }, () => true), false, false]);
    expect(await limiter.take("10.0.0.3", t0 + 20)).toBe(true);
    expect(await limiter.take("10.0.0.2", t0 + MINUTE + 9)).toBe(true);
  });
});

describe("SlidingWindow", () => {
  test("counts only the events inside the window", () => {
    const window = new SlidingWindow(3, 1_000, 0);
    window.add("k", 0);
    window.add("k", 500);
    expect(window.count("k", 900)).toBe(2);
    expect(window.count("k", 1_200)).toBe(1);
    expect(window.full("k", 1_200)).toBe(false);
    expect(window.take("k", 1_300)).toBe(true);
    expect(window.take("k", 1_400)).toBe(true);
    expect(window.take("k", 1_450)).toBe(false);
    expect(window.count("k", 1_450)).toBe(3);
  });
});
