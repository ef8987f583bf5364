import { describe, expect, test } from "bun:test";
import { parseDuration, tryParseDuration } from "../core/loop/duration.ts";

describe("parseDuration", () => {
  test("reads numbers as milliseconds and strings as a number and a unit", () => {
    const cases: Array<[number | string, number]> = [
      [0, 0],
      [1500, 1500],
      [2.4, 2],
      ["1500", 1500],
      ["500 ms", 500],
      ["500ms", 500],
      ["1 millisecond", 1],
      ["30 seconds", 30_000],
      ["1 second", 1_000],
      ["10s", 10_000],
      ["5 minutes", 300_000],
      ["1 min", 60_000],
      ["2 hours", 7_200_000],
      ["1.5 hours", 5_400_000],
      ["1 day", 86_400_000],
      ["3 days", 259_200_000],
      ["1 week", 604_800_000],
      ["  2 HOURS ", 7_200_000],
      [".5 s", 500],
    ];
    expect(cases.map(([input]) => parseDuration(input))).toEqual(cases.map(([, ms]) => ms));
  });

  test("refuses bad input with a message naming the value and the accepted forms", () => {
    for (const bad of ["", "soon", "5 fortnights", "1 month", "-1 s", "1 2 s", "s", "1e3 ms"]) {
      expect(() => parseDuration(bad)).toThrow(RangeError);
    }
    expect(() => parseDuration("5 fortnights")).toThrow('invalid duration "5 fortnights": unknown unit "fortnights"');
    expect(() => parseDuration("soon")).toThrow('"30 seconds"');
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => parseDuration(bad)).toThrow("must be a finite number of milliseconds ≥ 0");
    }
    expect(tryParseDuration("99999999999999 weeks")).toEqual({
      ok: false,
      error: 'invalid duration "99999999999999 weeks": too long',
    });
  });

  test("tryParseDuration returns the failure as a value", () => {
    expect(tryParseDuration("2 hours")).toEqual({ ok: true, value: 7_200_000 });
    expect(tryParseDuration("nope").ok).toBe(false);
  });
});
