/**
 * Durations of the loop SDK: milliseconds as a number, or `"<number> <unit>"` as a string.
 * Months and years are refused on purpose: their length depends on the calendar, so a loop that
 * means "next month" should compute a date and use `step.sleepUntil`.
 */
import type { Result } from "../result.ts";
import type { Duration } from "./index.ts";

const MS_PER_UNIT: Record<string, number> = {};

function defineUnit(ms: number, ...names: string[]): void {
  for (const name of names) MS_PER_UNIT[name] = ms;
}

defineUnit(1, "ms", "msec", "msecs", "millisecond", "milliseconds");
defineUnit(1_000, "s", "sec", "secs", "second", "seconds");
defineUnit(60_000, "m", "min", "mins", "minute", "minutes");
defineUnit(3_600_000, "h", "hr", "hrs", "hour", "hours");
defineUnit(86_400_000, "d", "day", "days");
defineUnit(604_800_000, "w", "week", "weeks");

const DURATION_PATTERN = /^(\d+(?:\.\d+)?|\.\d+)\s*([a-z]*)$/;

const HINT =
  'use milliseconds as a number, or a number and a unit such as "500 ms", "30 seconds", "5 minutes", "2 hours", "1 day"';

/** Parses a duration to whole milliseconds, as a value so callers choose how to report a mistake. */
export function tryParseDuration(duration: Duration): Result<number, string> {
  if (typeof duration === "number") {
    if (!Number.isFinite(duration) || duration < 0) {
      return { ok: false, error: `invalid duration ${String(duration)}: must be a finite number of milliseconds ≥ 0` };
    }
    return { ok: true, value: Math.round(duration) };
  }
  if (typeof duration !== "string") {
    return { ok: false, error: `invalid duration of type ${typeof duration}: ${HINT}` };
  }
  const match = DURATION_PATTERN.exec(duration.trim().toLowerCase());
  const amount = match?.[1];
  const unit = match?.[2] ?? "";
  if (amount === undefined) return { ok: false, error: `invalid duration ${JSON.stringify(duration)}: ${HINT}` };
  // A bare number in a string is milliseconds, like a number.
  const factor = unit === "" ? 1 : MS_PER_UNIT[unit];
  if (factor === undefined) {
    return { ok: false, error: `invalid duration ${JSON.stringify(duration)}: unknown unit "${unit}"; ${HINT}` };
  }
  const ms = Math.round(Number(amount) * factor);
  if (!Number.isSafeInteger(ms)) return { ok: false, error: `invalid duration ${JSON.stringify(duration)}: too long` };
  return { ok: true, value: ms };
}

/** Parses a duration to whole milliseconds; throws a `RangeError` naming the bad value. */
export function parseDuration(duration: Duration): number {
  const parsed = tryParseDuration(duration);
  if (!parsed.ok) throw new RangeError(parsed.error);
  return parsed.value;
}
