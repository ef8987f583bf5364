/**
 * Which server a command talks to, and which stored secret may be sent there. A stored secret is
 * only ever sent to the server it was issued by: `--server https://elsewhere` never receives it.
 */
import { UsageError } from "../errors.ts";
import { type Credentials, readCredentials, readSettings } from "./home.ts";

export const DEFAULT_SERVER = "http://127.0.0.1:3000";

export type ServerSource = "--server" | "HEALTH_URL" | "credentials" | "settings" | "default";

export interface ResolvedServer {
  url: string;
  source: ServerSource;
}

/** `http(s)://host[:port][/base]` without a trailing slash; anything else is a usage error. */
export function normalizeServer(raw: string, source: string): string {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new UsageError(`${source} must be an http(s) URL, such as ${DEFAULT_SERVER}`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new UsageError(`${source} must use http or https`);
  }
  if (parsed.username !== "" || parsed.password !== "") {
    throw new UsageError(`${source} must not carry a user name or password`);
  }
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, "")}`;
}

/** Precedence: `--server`, then `HEALTH_URL`, then the server of the stored login, then settings. */
export function resolveServer(flag: string | undefined, credentials = readCredentials()): ResolvedServer {
  if (flag !== undefined && flag !== "") return { url: normalizeServer(flag, "--server"), source: "--server" };
  const env = process.env.HEALTH_URL;
  if (env !== undefined && env !== "") return { url: normalizeServer(env, "HEALTH_URL"), source: "HEALTH_URL" };
  if (credentials !== undefined) return { url: credentials.server, source: "credentials" };
  const settings = readSettings();
  if (settings.server !== undefined)
    return { url: normalizeServer(settings.server, "settings.json server"), source: "settings" };
  return { url: DEFAULT_SERVER, source: "default" };
}

/** The stored credentials when they belong to `server`, else undefined. */
export function credentialsFor(server: string, credentials = readCredentials()): Credentials | undefined {
  return credentials !== undefined && credentials.server === server ? credentials : undefined;
}

/** Says why nothing usable is stored for `server`: nothing at all, or a login for another one. */
export function notLoggedIn(server: string, credentials = readCredentials()): string {
  return credentials !== undefined && credentials.server !== server
    ? `You are logged in to ${credentials.server}, not ${server}`
    : `You are not logged in to ${server}`;
}
