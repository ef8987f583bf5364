/**
 * idempotency: `Idempotency-Key` replay and conflict (docs/interface.md §4.1 rule 6). A repeat with the same key
 * and body returns the stored response with `Idempotent-Replayed: true`; a different body, or
 * a repeat while the first is still running, is 409. Only successful responses are stored, so
 * a failed call can be retried with the same key.
 */
import { Elysia } from "elysia";
import { canonicalJson, sha256Hex } from "../../core/hash.ts";
import { bodyValue } from "../../http/body.ts";
import type { IdempotencyStore } from "./store.ts";
import { HttpProblem, JSON_CONTENT_TYPE } from "../../http/problem.ts";
import { context, instanceSeed } from "../../http/context.ts";

export interface IdempotencyOptions {
  store: IdempotencyStore;
  /** Response headers worth replaying with the body. */
  replayHeaders?: readonly string[];
  now?: () => number;
}

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export const idempotency = (options: IdempotencyOptions) => {
  const now = options.now ?? Date.now;
  const replayHeaders = options.replayHeaders ?? [];
  return new Elysia({ name: "health.idempotency", seed: instanceSeed() })
    .use(context)
    .onBeforeHandle({ as: "scoped" }, function replayOrReserve({ body, request, state, set }) {
      const key = request.headers.get("idempotency-key");
      if (key === null) return;
      const started = performance.now();
      if (!KEY_PATTERN.test(key)) {
        throw new HttpProblem("invalid_request", "Idempotency-Key must be 1 to 255 printable ASCII characters", {
          errors: [{ path: "headers.idempotency-key", message: "must be 1 to 255 printable ASCII characters" }],
        });
      }
      const principalId = state.principal?.id ?? "anonymous";
      const scope = `${principalId} ${request.method} ${new URL(request.url).pathname}`;
      // Wrapped so that "no body" (an absent key) and a JSON null body hash differently.
      const requestHash = sha256Hex(canonicalJson({ body: bodyValue(body) }));
      const outcome = options.store.begin(scope, key, requestHash, now());
      state.record("idempotency", performance.now() - started);
      switch (outcome.kind) {
        case "new":
          state.idempotency = { scope, key };
          // An error ends the request before storeForReplay: free the key so the client can retry.
          state.onFailure(function releaseKey() {
            if (state.idempotency === undefined) return;
            state.idempotency = undefined;
            options.store.abandon(scope, key);
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
    })
    .mapResponse({ as: "scoped" }, function storeForReplay({ responseValue, state, set }) {
      const pending = state.idempotency;
      if (pending === undefined) return;
      state.idempotency = undefined;
      const status = typeof set.status === "number" ? set.status : 200;
      if (status < 200 || status >= 300) {
        options.store.abandon(pending.scope, pending.key);
        return;
      }
      const kept: Record<string, string> = {};
      for (const name of replayHeaders) {
        const value = set.headers[name];
        if (typeof value === "string") kept[name] = value;
      }
      options.store.complete(pending.scope, pending.key, status, responseValue, kept);
    });
};
