/**
 * Whether a PostgreSQL error means the database cannot be reached right now (refused, closed or
 * timed-out connections, a server shutting down or starting, no connection slot left), as opposed
 * to a bug or bad data. Requests that fail on such an error are answered 503 with Retry-After,
 * like those whose Redis is down, not 500. No imports: the SQLite server loads it too.
 */

/** Bun's client's own codes for a connection that failed, closed or timed out. */
const CLIENT_CODES = /^ERR_POSTGRES_(CONNECTION_|IDLE_TIMEOUT|LIFETIME_TIMEOUT|TLS_)/;
/** SQLSTATEs (Bun's `errno`): connection exceptions, admin or crash shutdown, cannot connect now, too many connections. */
const SERVER_STATES = new Set(["08000", "08001", "08003", "08004", "08006", "57P01", "57P02", "57P03", "53300"]);

export const DATABASE_RETRY_AFTER_SECONDS = 1;

export function isDatabaseUnavailable(error: unknown): boolean {
  // drizzle wraps the client's error in "Failed query: …" with the original as its cause.
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const { code, errno } = current as { code?: unknown; errno?: unknown };
    if (typeof code === "string" && CLIENT_CODES.test(code)) return true;
    if (typeof errno === "string" && SERVER_STATES.has(errno)) return true;
  }
  return false;
}
