/**
 * The step semantics of the SDK, run in-process against a recording host: the same code runs in a
 * loop worker, where the host is the link to the engine.
 */
import { describe, expect, test } from "bun:test";
import { NonRetryableError } from "health/loop";
import { decodeStoredJson, encodeStoredJson } from "../core/loop/json.ts";
import type { StoredStep } from "../core/loop/protocol.ts";
import { createStep, retryDelayMs, type SleepTarget, type StepDoneReport, type StepHost } from "../core/loop/step.ts";

interface Recorder {
  host: StepHost;
  done: StepDoneReport[];
  attempts: string[];
  failures: string[];
  sleeps: Array<{ key: string } & SleepTarget>;
}

const NOW = 1_800_000_000_000;

function recorder(): Recorder {
  const done: StepDoneReport[] = [];
  const attempts: string[] = [];
  const failures: string[] = [];
  const sleeps: Array<{ key: string } & SleepTarget> = [];
  const host: StepHost = {
    attemptStarted: async (key, _name, idx, attempt, timeoutMs) => {
      attempts.push(`${key}@${idx} #${attempt} t=${timeoutMs}`);
    },
    attemptFailed: (key, attempt, error) => failures.push(`${key} #${attempt} ${error.name}: ${error.message}`),
    stepDone: async (report) => {
      done.push(report);
    },
    sleep: (key, _name, _idx, target) => {
      sleeps.push({ key, ...target });
      // Like the engine: a due sleep goes on, a future one never answers (the worker is stopped).
      const due = "wakeAt" in target ? target.wakeAt <= NOW : target.delayMs <= 0;
      return due ? Promise.resolve() : new Promise<void>(() => {});
    },
  };
  return { host, done, attempts, failures, sleeps };
}

function stored(key: string, fields: Partial<StoredStep>): StoredStep {
  return {
    key,
    kind: "do",
    status: "complete",
    result: null,
    errorName: null,
    errorMessage: null,
    attempts: 1,
    wakeAt: null,
    ...fields,
  };
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof Error) return error;
    throw new Error(`rejected with a non-Error: ${String(error)}`);
  }
  throw new Error("expected a rejection");
}

describe("step.do replay", () => {
  test("a completed step returns its stored result without running again", async () => {
    const rec = recorder();
    const step = createStep(rec.host, [stored("fetch", { result: '{"n":1}' }), stored("empty", { result: null })]);
    let calls = 0;
    const fetched = await step.do<unknown>("fetch", () => {
      calls++;
      return { n: 2 };
    });
    const empty = await step.do<unknown>("empty", () => {
      calls++;
      return "x";
    });
    expect({ fetched, empty, calls, done: rec.done.length, attempts: rec.attempts }).toEqual({
      fetched: { n: 1 },
      empty: undefined,
      calls: 0,
      done: 0,
      attempts: [],
    });
  });

  test("a step interrupted mid-flight runs again, counting attempts on from the stored ones", async () => {
    const rec = recorder();
    const step = createStep(rec.host, [stored("send", { status: "running", attempts: 2 })]);
    expect(await step.do("send", () => "sent")).toBe("sent");
    expect(rec.done).toEqual([
      { key: "send", name: "send", idx: 0, status: "complete", result: '"sent"', error: null, attempts: 3 },
    ]);
  });

  test("a stored failure is thrown again without running the step", async () => {
    const rec = recorder();
    const step = createStep(rec.host, [
      stored("charge", { status: "errored", errorName: "NonRetryableError", errorMessage: "card declined" }),
    ]);
    let calls = 0;
    const error = await rejection(step.do("charge", () => calls++));
    expect({ name: error.name, message: error.message, calls }).toEqual({
      name: "NonRetryableError",
      message: "card declined",
      calls: 0,
    });
  });

  test("a replay that calls a different kind of step at the same place is refused", async () => {
    const step = createStep(recorder().host, [stored("wait", { kind: "sleep", status: "complete" })]);
    const error = await rejection(step.do("wait", () => 1));
    expect(error.name).toBe("NondeterminismError");
    expect(error.message).toContain("same order on every replay");
  });
});

describe("step names", () => {
  test("repeated names get #2, #3 … in call order, also for parallel steps", async () => {
    const rec = recorder();
    const step = createStep(rec.host, []);
    await step.do("fetch", () => 1);
    await Promise.all([step.do("fetch", async () => 2), step.do("other", () => 3), step.do("fetch", () => 4)]);
    await step.do("fetch#2b", () => 5);
    expect(rec.done.map((r) => `${r.key}@${r.idx}=${r.result}`).sort()).toEqual(
      ["fetch@0=1", "fetch#2@1=2", "other@2=3", "fetch#3@3=4", "fetch#2b@4=5"].sort(),
    );
  });

  test("a literal name that looks like a generated key does not collide", async () => {
    const rec = recorder();
    const step = createStep(rec.host, []);
    await step.do("a#2", () => "literal");
    await step.do("a", () => "first");
    await step.do("a", () => "second");
    expect(rec.done.map((r) => r.key)).toEqual(["a#2", "a", "a#3"]);
  });

  test("names must be non-empty strings and a function is required", async () => {
    const step = createStep(recorder().host, []);
    expect((await rejection(step.do("", () => 1))).message).toContain("non-empty string");
    expect((await rejection(step.do("x".repeat(257), () => 1))).message).toContain("at most 256");
    const noFn = step.do("missing", {}, undefined as unknown as () => number);
    expect((await rejection(noFn)).message).toBe('step.do("missing") needs a function to run');
  });
});

describe("retries", () => {
  test("retries up to the limit and returns the first success", async () => {
    const rec = recorder();
    const step = createStep(rec.host, []);
    let calls = 0;
    const value = await step.do("flaky", { retries: { limit: 3 } }, () => {
      calls++;
      if (calls < 3) throw new Error(`failure ${calls}`);
      return "ok";
    });
    expect({ value, calls, failures: rec.failures, done: rec.done.map((r) => [r.status, r.attempts]) }).toEqual({
      value: "ok",
      calls: 3,
      failures: ["flaky #1 Error: failure 1", "flaky #2 Error: failure 2"],
      done: [["complete", 3]],
    });
  });

  test("fails with the last error once the retries are spent", async () => {
    const rec = recorder();
    const step = createStep(rec.host, []);
    let calls = 0;
    const error = await rejection(
      step.do("down", { retries: { limit: 2 } }, () => {
        calls++;
        throw new Error(`failure ${calls}`);
      }),
    );
    expect({
      message: error.message,
      calls,
      done: rec.done.map((r) => [r.status, r.attempts, r.error?.message]),
    }).toEqual({
      message: "failure 3",
      calls: 3,
      done: [["errored", 3, "failure 3"]],
    });
  });

  test("without a retries config a failing step is not retried", async () => {
    const step = createStep(recorder().host, []);
    let calls = 0;
    await rejection(
      step.do("once", () => {
        calls++;
        throw new Error("no");
      }),
    );
    expect(calls).toBe(1);
  });

  test("NonRetryableError stops the retries at once", async () => {
    const rec = recorder();
    const step = createStep(rec.host, []);
    let calls = 0;
    const error = await rejection(
      step.do("refused", { retries: { limit: 5, delay: 1000 } }, () => {
        calls++;
        throw new NonRetryableError("permanently refused");
      }),
    );
    expect({ name: error.name, calls, stored: rec.done[0]?.error }).toEqual({
      name: "NonRetryableError",
      calls: 1,
      stored: { name: "NonRetryableError", message: "permanently refused" },
    });
  });

  test("the wait before retry n follows the backoff", () => {
    const waits = (backoff: "constant" | "linear" | "exponential") =>
      [1, 2, 3, 4].map((n) => retryDelayMs({ delayMs: 100, backoff }, n));
    expect({ constant: waits("constant"), linear: waits("linear"), exponential: waits("exponential") }).toEqual({
      constant: [100, 100, 100, 100],
      linear: [100, 200, 300, 400],
      exponential: [100, 200, 400, 800],
    });
  });

  test("the retry delays are really waited", async () => {
    const step = createStep(recorder().host, []);
    const calledAt: number[] = [];
    await step.do("timed", { retries: { limit: 2, delay: "40 ms", backoff: "exponential" } }, () => {
      calledAt.push(performance.now());
      if (calledAt.length < 3) throw new Error("again");
      return true;
    });
    const [first = 0, second = 0, third = 0] = calledAt;
    expect(second - first).toBeGreaterThanOrEqual(38);
    expect(third - second).toBeGreaterThanOrEqual(78);
  });

  test("a bad config is refused with a clear message", async () => {
    const step = createStep(recorder().host, []);
    expect((await rejection(step.do("a", { retries: { limit: -1 } }, () => 1))).message).toContain(
      "retries.limit must be an integer ≥ 0",
    );
    const badBackoff = { retries: { limit: 1, backoff: "random" as "linear" } };
    expect((await rejection(step.do("b", badBackoff, () => 1))).message).toContain("retries.backoff must be");
    expect((await rejection(step.do("c", { timeout: "soon" }, () => 1))).message).toContain(
      'timeout: invalid duration "soon"',
    );
    expect((await rejection(step.do("d", { timeout: 0 }, () => 1))).message).toContain(
      "timeout must be longer than 0 ms",
    );
  });
});

describe("timeouts", () => {
  test("an attempt over its timeout fails with StepTimeoutError and may be retried", async () => {
    const rec = recorder();
    const step = createStep(rec.host, []);
    let calls = 0;
    const error = await rejection(
      step.do("stuck", { timeout: "30 ms", retries: { limit: 1 } }, () => {
        calls++;
        return new Promise(() => {});
      }),
    );
    expect({ name: error.name, message: error.message, calls, attempts: rec.attempts }).toEqual({
      name: "StepTimeoutError",
      message: 'step "stuck" timed out after 30 ms',
      calls: 2,
      attempts: ["stuck@0 #1 t=30", "stuck@0 #2 t=30"],
    });
  });

  test("a step that finishes in time is unaffected", async () => {
    const step = createStep(recorder().host, []);
    expect(await step.do("quick", { timeout: "1 second" }, async () => "fast")).toBe("fast");
  });
});

describe("step results", () => {
  test("values that are not JSON fail the step at once, naming the culprit", async () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const cases: Array<[string, () => unknown, string]> = [
      ["function", () => () => 1, "$ is a function"],
      ["bigint", () => 10n, "$ is a BigInt"],
      ["symbol", () => Symbol("s"), "$ is a symbol"],
      ["cycle", () => cyclic, "$.self refers back to one of its parents (a cycle)"],
      ["nested", () => ({ list: [1, { f: () => 0 }] }), "$.list[1].f is a function"],
      ["map", () => new Map(), "$ is a Map"],
      ["nan", () => ({ avg: Number.NaN }), "$.avg is NaN"],
    ];
    for (const [name, fn, expected] of cases) {
      const rec = recorder();
      const step = createStep(rec.host, []);
      let calls = 0;
      const error = await rejection(
        step.do(name, { retries: { limit: 3 } }, () => {
          calls++;
          return fn();
        }),
      );
      expect({ name: error.name, calls, status: rec.done[0]?.status }).toEqual({
        name: "StepResultError",
        calls: 1,
        status: "errored",
      });
      expect(error.message).toStartWith(`the result of step "${name}" is not JSON-serializable: ${expected}`);
    }
  });

  test("undefined and null are kept apart; shared references are not cycles", async () => {
    const rec = recorder();
    const step = createStep(rec.host, []);
    const shared = { x: 1 };
    const results = [
      await step.do("undef", () => undefined),
      await step.do("null", () => null),
      await step.do("shared", () => [shared, shared]),
    ];
    expect({ results, stored: rec.done.map((r) => r.result) }).toEqual({
      results: [undefined, null, [{ x: 1 }, { x: 1 }]],
      stored: [null, "null", '[{"x":1},{"x":1}]'],
    });
  });

  test("the first run returns the JSON round trip, exactly what a replay returns", async () => {
    const rec = recorder();
    const at = new Date("2026-01-02T03:04:05.000Z");
    const first = await createStep(rec.host, []).do<unknown>("when", () => ({ at, skip: undefined }));
    const replayed = await createStep(recorder().host, [
      stored("when", { result: rec.done[0]?.result ?? null }),
    ]).do<unknown>("when", () => null);
    expect(first).toEqual({ at: "2026-01-02T03:04:05.000Z" });
    expect(replayed).toEqual(first);
  });

  test("stored JSON encoding", () => {
    expect([
      encodeStoredJson(undefined, "x"),
      encodeStoredJson(null, "x"),
      encodeStoredJson({ a: [1, "b"] }, "x"),
    ]).toEqual([
      { ok: true, value: null },
      { ok: true, value: "null" },
      { ok: true, value: '{"a":[1,"b"]}' },
    ]);
    expect([decodeStoredJson(null), decodeStoredJson("null")]).toEqual([undefined, null]);
  });
});

describe("sleep", () => {
  test("a new sleep asks the engine to wake after the duration, or at the given time", async () => {
    const rec = recorder();
    const step = createStep(rec.host, []);
    void step.sleep("nap", "2 hours");
    void step.sleepUntil("meeting", new Date(NOW + 5_000));
    void step.sleepUntil("epoch", NOW + 6_000);
    void step.sleepUntil("text", new Date(NOW + 7_000).toISOString());
    expect(rec.sleeps).toEqual([
      { key: "nap", delayMs: 7_200_000 },
      { key: "meeting", wakeAt: NOW + 5_000 },
      { key: "epoch", wakeAt: NOW + 6_000 },
      { key: "text", wakeAt: NOW + 7_000 },
    ]);
  });

  test("on replay the stored wake time wins, and a finished sleep returns at once", async () => {
    const rec = recorder();
    const step = createStep(rec.host, [
      stored("done", { kind: "sleep", status: "complete", wakeAt: NOW - 10 }),
      stored("pending", { kind: "sleep", status: "sleeping", wakeAt: NOW + 50 }),
    ]);
    await step.sleep("done", "1 day");
    void step.sleep("pending", "1 day");
    expect(rec.sleeps).toEqual([{ key: "pending", wakeAt: NOW + 50 }]);
  });

  test("a sleep already due goes on", async () => {
    const rec = recorder();
    const step = createStep(rec.host, []);
    await step.sleep("zero", 0);
    await step.sleepUntil("past", NOW - 1_000);
    expect(rec.sleeps.map((s) => s.key)).toEqual(["zero", "past"]);
  });

  test("bad durations and dates are refused", async () => {
    const step = createStep(recorder().host, []);
    expect((await rejection(step.sleep("a", "whenever"))).message).toContain(
      'step.sleep("a"): invalid duration "whenever"',
    );
    expect((await rejection(step.sleepUntil("b", "not a date"))).message).toBe(
      'step.sleepUntil("b"): not a date is not a valid date',
    );
  });
});
