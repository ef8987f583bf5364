/**
 * Planning Idempotency-Keys in Redis, shared by every instance, with the SQLite store's rules:
 * kept 24 hours from the first request; 409 while in flight; an in-flight record older than
 * `staleAfterMs` belongs to a request that died with its instance and may be taken over.
 *
 * A key is claimed with `SET NX PX` (one instance wins). A repeat reads the record: the stored
 * answer is replayed, or it is a conflict, or a stale claim is taken over by compare-and-set, so
 * two instances never both take over the same one. Completing and abandoning are compare-and-set
 * on this instance's own claim too: a request that lost its claim to a takeover cannot overwrite
 * or free the claim of the request that took it.
 *
 * `begin` rejects with RedisUnavailableError when Redis cannot answer (the plugin refuses the
 * request). `complete` and `abandon` never reject: a record they could not write stays in flight
 * and goes stale, as if this instance had died.
 */
import * as v from "valibot";
import type { RedisConnection } from "../../core/redis.ts";
import { type Begin, IDEMPOTENCY_TTL_MS, type SharedIdempotencyStore, storedBody } from "./store.ts";

// KEYS[1]: the record. ARGV[1]: the exact value expected; ARGV[2]: the new value ("" deletes);
// ARGV[3]: "keep" to keep the expiry, else a PX in milliseconds.
const COMPARE_AND_SET = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1])
elseif ARGV[3] == 'keep' then redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
else redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
return 1
`;

const recordSchema = v.variant("state", [
  v.object({ state: v.literal("in_flight"), hash: v.string(), at: v.number(), claim: v.string() }),
  v.object({
    state: v.literal("done"),
    hash: v.string(),
    status: v.number(),
    body: v.nullable(v.string()),
    headers: v.record(v.string(), v.string()),
  }),
]);

/** Reads, takeovers lost to another instance: after this many, the key counts as in flight. */
const ATTEMPTS = 3;

export class RedisIdempotencyStore implements SharedIdempotencyStore {
  readonly shared = true;
  /** The exact in-flight value this instance wrote, per Redis key, until it completes or abandons. */
  private readonly claims = new Map<string, { value: string; hash: string }>();

  constructor(
    private readonly redis: RedisConnection,
    private readonly staleAfterMs = 60_000,
    private readonly prefix = "health:idempotency:",
  ) {}

  async begin(scope: string, key: string, requestHash: string, nowMs: number): Promise<Begin> {
    const id = this.redisKey(scope, key);
    const claim = JSON.stringify({ state: "in_flight", hash: requestHash, at: nowMs, claim: crypto.randomUUID() });
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      if ((await this.redis.send("SET", [id, claim, "NX", "PX", String(IDEMPOTENCY_TTL_MS)])) === "OK") {
        this.claims.set(id, { value: claim, hash: requestHash });
        return { kind: "new" };
      }
      const text = await this.redis.send("GET", [id]);
      // Freed (abandoned or expired) between the two commands: claim again.
      if (typeof text !== "string") continue;
      const parsed = v.safeParse(recordSchema, safeJson(text));
      if (parsed.success) {
        const record = parsed.output;
        if (record.hash !== requestHash) return { kind: "conflict", reason: "mismatch" };
        if (record.state === "done") {
          return { kind: "replay", status: record.status, body: record.body ?? undefined, headers: record.headers };
        }
        if (nowMs - record.at < this.staleAfterMs) return { kind: "conflict", reason: "in_flight" };
      }
      // Stale, or unreadable (not written by this store): take it over, unless another did first.
      if (await this.compareAndSet(id, text, claim, String(IDEMPOTENCY_TTL_MS))) {
        this.claims.set(id, { value: claim, hash: requestHash });
        return { kind: "new" };
      }
    }
    return { kind: "conflict", reason: "in_flight" };
  }

  async complete(
    scope: string,
    key: string,
    status: number,
    body: unknown,
    headers: Record<string, string>,
  ): Promise<void> {
    const id = this.redisKey(scope, key);
    const claim = this.claims.get(id);
    if (claim === undefined) return;
    this.claims.delete(id);
    const done = JSON.stringify({ state: "done", hash: claim.hash, status, body: storedBody(body), headers });
    // Kept as long as the claim was: 24 hours from the first request, as in SQLite.
    await this.compareAndSet(id, claim.value, done, "keep").catch(() => false);
  }

  async abandon(scope: string, key: string): Promise<void> {
    const id = this.redisKey(scope, key);
    const claim = this.claims.get(id);
    if (claim === undefined) return;
    this.claims.delete(id);
    await this.compareAndSet(id, claim.value, "", "keep").catch(() => false);
  }

  private redisKey(scope: string, key: string): string {
    return `${this.prefix}${scope} ${key}`;
  }

  private async compareAndSet(id: string, expected: string, next: string, px: string): Promise<boolean> {
    return (await this.redis.send("EVAL", [COMPARE_AND_SET, "1", id, expected, next, px])) === 1;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
