/**
 * idempotency: `Idempotency-Key` replay and conflict (docs/interface.md §4.1 rule 6). A repeat with the same key
 * and body returns the stored response with `Idempotent-Replayed: true`; a different body, or
 * a repeat while the first is still running, is 409. Only successful responses are stored, so
 * a failed call can be retried with the same key. With a shared store (Redis) that cannot
 * answer, a request with a key is refused (503 with Retry-After) rather than risk running twice.
 */
import { Elysia } from "elysia";
import { canonicalJson, sha256Hex } from "../../core/hash.ts";
import { REDIS_RETRY_AFTER_SECONDS, RedisUnavailableError } from "../../core/redis.ts";
import { bodyValue } from "../../http/body.ts";
import type { Begin, IdempotencyStore } from "./store.ts";
import { HttpProblem, JSON_CONTENT_TYPE, unavailable } from "../../http/problem.ts";
import { context, instanceSeed, type RequestState } from "../../http/context.ts";

export interface IdempotencyOptions {
  store: IdempotencyStore;
  /** Response headers worth replaying with the body. */
  replayHeaders?: readonly string[];
  now?: () => number;
}

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** What of Elysia's `set` the hooks touch. */
interface ResponseSet {
  status?: number | string;
  headers: Record<string, unknown>;
}

export const idempotency = (options: IdempotencyOptions) => {
  const now = options.now ?? Date.now;
  const replayHeaders = options.replayHeaders ?? [];
  const store = options.store;

  function scopeOf(key: string, request: Request, state: RequestState): string {
    if (!KEY_PATTERN.test(key)) {
      throw new HttpProblem("invalid_request", "Idempotency-Key must be 1 to 255 printable ASCII characters", {
        errors: [{ path: "headers.idempotency-key", message: "must be 1 to 255 printable ASCII characters" }],
      });
    }
    const principalId = state.principal?.id ?? "anonymous";
    return `${principalId} ${request.method} ${new URL(request.url).pathname}`;
  }

  // Wrapped so that "no body" (an absent key) and a JSON null body hash differently.
  const requestHashOf = (body: unknown) => sha256Hex(canonicalJson({ body: bodyValue(body) }));

  /** Acts on the store's answer: reserve (and release on failure), refuse, or replay. */
  function settle(outcome: Begin, scope: string, key: string, state: RequestState, set: ResponseSet) {
    switch (outcome.kind) {
      case "new":
        state.idempotency = { scope, key };
        // An error ends the request before storeForReplay: free the key so the client can retry.
        state.onFailure(function releaseKey() {
          if (state.idempotency === undefined) return;
          state.idempotency = undefined;
          void store.abandon(scope, key);
        });
        return;
      case "conflict":
        throw new HttpProblem(
          "idempotency_conflict",
          outcome.reason === "in_flight"
            ? "A request with this Idempotency-Key is still in flight"
            : "This Idempotency-Key was used with a different request body",
        );
      case "replay":
        // Bodies are stored as the JSON text that was sent.
        set.status = outcome.status;
        Object.assign(set.headers, { "content-type": JSON_CONTENT_TYPE }, outcome.headers, {
          "idempotent-replayed": "true",
        });
        return outcome.body;
    }
  }

  /** What to store for the pending key, or undefined (no key, or a failure: the key is freed). */
  function toStore(state: RequestState, set: ResponseSet) {
    const pending = state.idempotency;
    if (pending === undefined) return undefined;
    state.idempotency = undefined;
    const status = typeof set.status === "number" ? set.status : 200;
    if (status < 200 || status >= 300) {
      void store.abandon(pending.scope, pending.key);
      return undefined;
    }
    const kept: Record<string, string> = {};
    for (const name of replayHeaders) {
      const value = set.headers[name];
      if (typeof value === "string") kept[name] = value;
    }
    return { ...pending, status, kept };
  }

  const plugin = new Elysia({ name: "health.idempotency", seed: instanceSeed() }).use(context);
  // Elysia awaits a hook only when it is an async function: the SQLite store keeps synchronous
  // hooks, a shared store (Redis) gets async ones. Each hook destructures what it uses: Elysia
  // reads hook sources, and a context passed whole to a function makes it parse the query,
  // headers and cookies of every request on the route.
  if (!store.shared) {
    return plugin
      .onBeforeHandle({ as: "scoped" }, function replayOrReserve({ body, request, state, set }) {
        const key = request.headers.get("idempotency-key");
        if (key === null) return;
        const started = performance.now();
        const scope = scopeOf(key, request, state);
        const outcome = store.begin(scope, key, requestHashOf(body), now());
        state.record("idempotency", performance.now() - started);
        // Not a plain `return` of the call: Elysia reads a hook's source text (as Bun transpiled
        // it), takes one that returns a call for a promise, and every request then pays a wait.
        const replayed = settle(outcome, scope, key, state, set);
        if (replayed !== undefined) return replayed;
      })
      .mapResponse({ as: "scoped" }, function storeForReplay({ responseValue, state, set }) {
        const done = toStore(state, set);
        if (done !== undefined) store.complete(done.scope, done.key, done.status, responseValue, done.kept);
      });
  }
  return plugin
    .onBeforeHandle({ as: "scoped" }, async function replayOrReserveShared({ body, request, state, set }) {
      const key = request.headers.get("idempotency-key");
      if (key === null) return;
      const started = performance.now();
      const scope = scopeOf(key, request, state);
      let outcome: Begin;
      try {
        outcome = await store.begin(scope, key, requestHashOf(body), now());
      } catch (error) {
        // Without the shared record a repeat could run twice: refuse instead.
        if (error instanceof RedisUnavailableError) {
          throw unavailable("Idempotency-Keys cannot be checked right now; retry shortly", REDIS_RETRY_AFTER_SECONDS);
        }
        throw error;
      } finally {
        state.record("idempotency", performance.now() - started);
      }
      return settle(outcome, scope, key, state, set);
    })
    .mapResponse({ as: "scoped" }, async function storeForReplayShared({ responseValue, state, set }) {
      // Awaited before the response leaves, so a repeat sent to any instance right after finds it.
      const done = toStore(state, set);
      if (done !== undefined) await store.complete(done.scope, done.key, done.status, responseValue, done.kept);
    });
};
