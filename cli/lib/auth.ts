/** The stored login a command needs: an admin session (tokens, whoami) or a token (hosted planning). */
import { CliError } from "../errors.ts";
import { type StoredSession, type StoredToken, readCredentials } from "./home.ts";
import { sessionExpired, type TrpcClient, trpcClient } from "./api.ts";
import { credentialsFor, notLoggedIn, resolveServer } from "./server.ts";

export interface SessionLogin {
  server: string;
  session: StoredSession;
  client: TrpcClient;
}

export function isExpired(session: StoredSession, now = Date.now()): boolean {
  const expiresAt = Date.parse(session.expiresAt);
  return Number.isFinite(expiresAt) && expiresAt <= now;
}

/** The admin session for the resolved server, or a clear error saying how to get one. */
export function requireSession(serverFlag: string | undefined): SessionLogin {
  const credentials = readCredentials();
  const { url } = resolveServer(serverFlag, credentials);
  const stored = credentialsFor(url, credentials);
  if (stored?.session === undefined) {
    const hint =
      stored?.token !== undefined
        ? "A token is stored, but managing tokens needs an admin session: run health login (or health login --email <e> --password-stdin)"
        : "Run health login and approve it in the console (or health login --email <e> --password-stdin)";
    const message =
      credentials !== undefined && credentials.server !== url
        ? notLoggedIn(url, credentials)
        : `You are not signed in as an admin on ${url}`;
    throw new CliError(message, { hint });
  }
  if (isExpired(stored.session)) throw sessionExpired();
  return { server: url, session: stored.session, client: trpcClient(url, stored.session.secret) };
}

export interface TokenLogin {
  server: string;
  token: StoredToken;
}

/** The stored system key or `cli:run` token for the resolved server, if any. */
export function storedToken(serverFlag: string | undefined): TokenLogin | undefined {
  const credentials = readCredentials();
  const { url } = resolveServer(serverFlag, credentials);
  const token = credentialsFor(url, credentials)?.token;
  return token === undefined ? undefined : { server: url, token };
}
