/**
 * The one Redis connection a server's shared stores use (rate limits, plan cache, idempotency
 * keys, sign-in throttles), over Bun's built-in client (no dependency).
 *
 * Bun's client has no command timeout, and by default it queues commands while disconnected and
 * stops reconnecting after 20 attempts: a dead Redis would hang requests, and a Redis that comes
 * back after a long outage would never be used again. So the client is made with no offline
 * queue (a command while disconnected fails at once) and no reconnection of its own; every
 * command here has a deadline, and the next command after a failure reconnects, at most once per
 * `RECONNECT_EVERY_MS` (the others fail at once meanwhile). Whatever keeps a command from being
 * answered becomes a `RedisUnavailableError`; each store decides what that means for its concern
 * (docs/deploy.md: the limiters refuse, the cache misses, idempotency refuses).
 */
import { RedisClient } from "bun";

/** What a refusal for want of Redis tells the client to wait (`Retry-After`, seconds). */
export const REDIS_RETRY_AFTER_SECONDS = 1;
/** After a failed or timed-out attempt, commands fail at once for this long before the next try. */
export const RECONNECT_EVERY_MS = 500;

/** Redis could not answer in time: down, unreachable, restarting, or too slow. */
export class RedisUnavailableError extends Error {
  constructor(reason: string, options?: ErrorOptions) {
    super(`Redis is unavailable: ${reason}`, options);
    this.name = "RedisUnavailableError";
  }
}

// Error replies that mean "not now" (loading its data, a script running too long, a replica
// cut off) rather than a wrong command: they count as unavailability, not as a bug.
const TRANSIENT_REPLY = /^(LOADING|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN|READONLY|NOREPLICAS)\b/;

function unavailableOr(error: unknown): unknown {
  if (error instanceof RedisUnavailableError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  // A real error reply (a wrong type, a script error) is a bug to surface, not an outage.
  if (code === "ERR_REDIS_SERVER_ERROR" && !TRANSIENT_REPLY.test(message)) return error;
  return new RedisUnavailableError(typeof code === "string" ? code : "the connection failed", { cause: error });
}

export interface RedisConnectionOptions {
  /** Deadline of one command, connecting included; also the connect timeout. */
  timeoutMs: number;
}

export class RedisConnection {
  private readonly client: RedisClient;
  private readonly timeoutMs: number;
  private connecting: Promise<void> | undefined;
  private lastAttemptMs = Number.NEGATIVE_INFINITY;
  private closed = false;

  constructor(url: string, options: RedisConnectionOptions) {
    this.timeoutMs = options.timeoutMs;
    this.client = new RedisClient(url, {
      connectionTimeout: options.timeoutMs,
      autoReconnect: false,
      enableOfflineQueue: false,
      enableAutoPipelining: true,
    });
  }

  get connected(): boolean {
    return this.client.connected;
  }

  /** Connects (at start-up, to say early whether Redis is there); false when it is not. */
  async ping(): Promise<boolean> {
    try {
      return (await this.send("PING", [])) === "PONG";
    } catch {
      return false;
    }
  }

  /**
   * One command, answered within the deadline or rejected with `RedisUnavailableError`. An error
   * reply that is not about availability (a wrong type, a script error) is rethrown as it came.
   */
  send(command: string, args: string[]): Promise<unknown> {
    const answer = this.client.connected
      ? this.client.send(command, args)
      : this.reconnect().then(() => this.client.send(command, args));
    return this.deadline(answer);
  }

  close(): void {
    this.closed = true;
    this.client.close();
  }

  private reconnect(): Promise<void> {
    if (this.closed) return Promise.reject(new RedisUnavailableError("the connection was closed"));
    if (this.connecting !== undefined) return this.connecting;
    const now = performance.now();
    if (now - this.lastAttemptMs < RECONNECT_EVERY_MS) {
      return Promise.reject(new RedisUnavailableError("not connected; retrying shortly"));
    }
    this.lastAttemptMs = now;
    const attempt = this.client.connect().finally(() => {
      this.connecting = undefined;
    });
    this.connecting = attempt;
    return attempt;
  }

  private deadline<T>(answer: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new RedisUnavailableError(`no answer within ${this.timeoutMs} ms`));
        // A Redis that stopped answering (paused, or cut off without a reset) keeps the socket
        // open: drop it, so the commands queued behind fail now and the next one reconnects
        // (after RECONNECT_EVERY_MS) instead of each waiting out its own deadline.
        this.lastAttemptMs = performance.now();
        if (this.client.connected) this.client.close();
      }, this.timeoutMs);
      answer.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(unavailableOr(error));
        },
      );
    });
  }
}
