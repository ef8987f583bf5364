/**
 * cache: identical (company, prompt, intent, workspace manifest, model) within the TTL is served
 * from the cache (`X-Health-Cache: hit`). Identical requests that arrive while the first is
 * still with the upstream wait for it instead of calling the upstream again. Only successful
 * upstream answers are stored; every answer, cached or not, still passes the sanitizer.
 */
import { Elysia } from "elysia";
import { canonicalJson, sha256Hex } from "../../core/hash.ts";
import type { CacheStore } from "./store.ts";
import { PlanResult } from "../../http/plan-result.ts";
import type { PlanningRequest } from "../../schema/wire.ts";
import { context, instanceSeed } from "../../http/context.ts";

export interface CacheOptions {
  store: CacheStore<PlanResult>;
  ttlMs: number;
  /** Part of the key: a different upstream model is a different answer. */
  model: string;
  now?: () => number;
}

interface Flight {
  promise: Promise<PlanResult>;
  resolve: (value: PlanResult) => void;
  reject: (reason: unknown) => void;
}

/** Keys up to this length are the canonical text itself; longer ones its SHA-256. */
export const LITERAL_KEY_CHARS = 1024;

/**
 * Canonical JSON of the parts. A positional array is canonical without sorting keys; only the
 * manifest (an object) needs its keys sorted. A short key is the text itself: exact, and the
 * hash it would cost is a measurable share of a cache hit. A long one is its SHA-256 (64 hex
 * characters, which no canonical text is: that starts with "["), so 10,000 entries of
 * 16,000-character prompts do not keep 16,000-character keys. Redis hashes every key it is given
 * (redis-store.ts).
 */
export function planCacheKey(parts: {
  company: string;
  prompt: string;
  intent: string;
  manifest: unknown;
  model: string;
}): string {
  const manifest = parts.manifest === null || parts.manifest === undefined ? "null" : canonicalJson(parts.manifest);
  const text = `[${JSON.stringify(parts.company)},${JSON.stringify(parts.prompt)},${JSON.stringify(parts.intent)},${manifest},${JSON.stringify(parts.model)}]`;
  return text.length <= LITERAL_KEY_CHARS ? text : sha256Hex(text);
}

export const cache = (options: CacheOptions) => {
  const now = options.now ?? Date.now;
  const flights = new Map<string, Flight>();
  // A flight per request that leads one, so its hooks can settle it.
  const leading = new WeakMap<object, { key: string; flight: Flight }>();

  const store = options.store;
  const plugin = new Elysia({ name: "health.cache", seed: instanceSeed() })
    .use(context)
    // async: Elysia awaits a hook's result only when the hook itself is an async function.
    .onBeforeHandle({ as: "scoped" }, async function serveFromCache({ body, state }) {
      if (options.ttlMs === 0) {
        state.cache = "bypass";
        return;
      }
      const started = performance.now();
      const request = body as PlanningRequest;
      const key = planCacheKey({
        company: state.company ?? "",
        prompt: state.redactedPrompt ?? request.redacted_prompt,
        intent: state.intent ?? request.intent,
        manifest: request.workspace_manifest,
        model: options.model,
      });
      // A shared store answers with a promise; the in-memory one never makes this hook wait.
      const stored = store.get(key, now());
      const hit = stored instanceof Promise ? await stored : stored;
      const flight = hit ? undefined : flights.get(key);
      state.cache = hit || flight ? "hit" : "miss";
      state.record("cache", performance.now() - started);
      if (hit) return hit;
      if (flight) return await flight.promise;
      let resolve: Flight["resolve"] = () => {};
      let reject: Flight["reject"] = () => {};
      const promise = new Promise<PlanResult>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      // Waiters handle the rejection themselves; this keeps an unawaited flight from crashing.
      promise.catch(() => {});
      const mine = { promise, resolve, reject };
      flights.set(key, mine);
      leading.set(state, { key, flight: mine });
      // The leader failed (upstream error, timeout): waiters fail with it rather than hang.
      state.onFailure(function releaseWaiters(error) {
        land(state, { ok: false, error });
      });
    });
  // The in-memory store writes at once and keeps this hook synchronous. A shared store's write
  // is waited for before the answer leaves, so the same request sent next to any instance is a hit.
  if (!store.shared) {
    return plugin.onAfterHandle({ as: "scoped" }, function fillCache({ responseValue, state }) {
      if (responseValue instanceof PlanResult) land(state, { ok: true, value: responseValue });
    });
  }
  return plugin.onAfterHandle({ as: "scoped" }, async function fillSharedCache({ responseValue, state }) {
    if (responseValue instanceof PlanResult) await land(state, { ok: true, value: responseValue });
  });

  /**
   * Ends the flight this request leads: stores and shares a success, passes on a failure. The
   * waiters have their answer at once; what is returned is the shared store's write, if any.
   */
  function land(
    state: object,
    outcome: { ok: true; value: PlanResult } | { ok: false; error: unknown },
  ): void | Promise<void> {
    const lead = leading.get(state);
    if (lead === undefined) return;
    leading.delete(state);
    flights.delete(lead.key);
    if (!outcome.ok) {
      lead.flight.reject(outcome.error);
      return;
    }
    lead.flight.resolve(outcome.value);
    return store.set(lead.key, outcome.value, options.ttlMs, now());
  }
};
