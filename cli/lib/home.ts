/**
 * `HEALTH_HOME` (default `~/.health`): the builder's credentials and settings. Credentials are
 * written atomically with mode 0600 in a 0700 directory, because they are bearer secrets.
 *
 * credentials.json holds at most one admin session (from `health login`, by device link or
 * --email) and one token (a system key or a `cli:run` token, from `health login --token`), both
 * for one server: they are only ever sent to the server they were issued by.
 *
 * settings.json is optional and edited by hand: `{ "company": "<slug>" }` sets the
 * `X-Service-Company` attribution header of hosted planning calls.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import { CliError } from "../errors.ts";

export function healthHome(): string {
  const configured = process.env.HEALTH_HOME;
  return configured !== undefined && configured !== "" ? configured : join(homedir(), ".health");
}

export const credentialsPath = (): string => join(healthHome(), "credentials.json");
export const settingsPath = (): string => join(healthHome(), "settings.json");

const sessionSchema = v.object({
  secret: v.pipe(v.string(), v.nonEmpty()),
  email: v.string(),
  expiresAt: v.string(),
  org: v.optional(v.string()),
});

const tokenSchema = v.object({
  secret: v.pipe(v.string(), v.nonEmpty()),
  company: v.optional(v.string()),
  name: v.optional(v.string()),
  scopes: v.array(v.string()),
});

const credentialsSchema = v.object({
  version: v.literal(1),
  server: v.string(),
  session: v.optional(sessionSchema),
  token: v.optional(tokenSchema),
});

export type StoredSession = v.InferOutput<typeof sessionSchema>;
export type StoredToken = v.InferOutput<typeof tokenSchema>;
export type Credentials = v.InferOutput<typeof credentialsSchema>;

const settingsSchema = v.object({
  company: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "company must be a slug"))),
  server: v.optional(v.string()),
});
export type Settings = v.InferOutput<typeof settingsSchema>;

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new CliError(`${path} is not readable JSON`, { hint: "Delete it and run health login again" });
  }
}

export function readCredentials(): Credentials | undefined {
  const path = credentialsPath();
  const raw = readJson(path);
  if (raw === undefined) return undefined;
  const parsed = v.safeParse(credentialsSchema, raw);
  if (!parsed.success) {
    throw new CliError(`${path} is not in the expected format`, { hint: "Run health logout, then health login" });
  }
  return parsed.output;
}

/** The home directory, created (or tightened) to 0700: it holds secrets. */
function ensureHome(): string {
  const home = healthHome();
  mkdirSync(home, { recursive: true, mode: 0o700 });
  chmodSync(home, 0o700);
  return home;
}

/** Writes through a temp file and a rename, so a crash never leaves half a credentials file. */
export function writeCredentials(credentials: Credentials): void {
  const home = ensureHome();
  const path = credentialsPath();
  const temp = join(home, `.credentials.${process.pid}.tmp`);
  writeFileSync(temp, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temp, 0o600);
  renameSync(temp, path);
}

export function deleteCredentials(): boolean {
  const path = credentialsPath();
  if (!existsSync(path)) return false;
  rmSync(path, { force: true });
  return true;
}

/**
 * Stores a new session or token for `server`. Credentials of another server are dropped: one
 * file never mixes secrets of two servers.
 */
export function saveCredential(
  server: string,
  update: { session?: StoredSession; token?: StoredToken },
): { credentials: Credentials; replacedServer: string | undefined } {
  const current = readCredentialsQuietly();
  const sameServer = current !== undefined && current.server === server;
  const base: Credentials = sameServer ? current : { version: 1, server };
  const credentials: Credentials = { ...base, ...update };
  writeCredentials(credentials);
  return { credentials, replacedServer: current !== undefined && !sameServer ? current.server : undefined };
}

/** A broken file is replaced at the next login rather than blocking it. */
function readCredentialsQuietly(): Credentials | undefined {
  try {
    return readCredentials();
  } catch {
    return undefined;
  }
}

export function readSettings(): Settings {
  const raw = readJson(settingsPath());
  if (raw === undefined) return {};
  const parsed = v.safeParse(settingsSchema, raw);
  if (!parsed.success) {
    throw new CliError(`${settingsPath()}: ${parsed.issues[0]?.message ?? "invalid settings"}`);
  }
  return parsed.output;
}
