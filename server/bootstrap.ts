/**
 * First-start set-up: the default organization, the system key's stored hash and the first admin.
 * A generated system key is returned once so start-up can print it; only its hash is kept.
 *
 * What start-up needs of a database is `StartupStore`: the SQLite one below (the server's, its
 * statements unchanged) and bootstrap-postgres.ts, one suite over both (test/startup-store.test.ts).
 * Over PostgreSQL several instances may start at once on one empty database; each write there is
 * one `INSERT … ON CONFLICT DO NOTHING`, so they make one default organization and one system key,
 * and only the instance whose insert won prints the key.
 */
import { eq } from "drizzle-orm";
import { sha256Hex } from "../core/hash.ts";
import { newId } from "../core/ids.ts";
import { generateToken } from "../core/tokens.ts";
import { organizations, settings } from "../schema/tables.ts";
import type { Db } from "./db.ts";
import { type AccountStore, bootstrapAdmin } from "./services/accounts.ts";

export const DEFAULT_ORG_SLUG = "default";
export const SYSTEM_KEY_HASH = "system_key_hash";

export interface StartupStore {
  /** The organization with slug `default`, made if missing; of instances starting at once, one makes it. */
  ensureDefaultOrganization(): Promise<{ id: string; slug: string }>;
  /**
   * The configured key wins. Otherwise the stored hash; otherwise a new key, whose plaintext is
   * returned (`generated`) exactly once: to the one instance whose hash was stored.
   */
  resolveSystemKey(configured: string | undefined): Promise<{ hash: string; generated?: string }>;
}

export interface Startup {
  defaultOrg: { id: string; slug: string };
  systemKey: { hash: string; generated?: string };
  bootstrap: Awaited<ReturnType<typeof bootstrapAdmin>>;
}

/** Everything start-up writes, in order, over either dialect. */
export async function startUp(
  startup: StartupStore,
  accounts: AccountStore,
  config: { systemKey: string | undefined; admin: { email: string; password: string } | undefined },
): Promise<Startup> {
  const defaultOrg = await startup.ensureDefaultOrganization();
  const systemKey = await startup.resolveSystemKey(config.systemKey);
  const bootstrap = await bootstrapAdmin(accounts, defaultOrg.id, config.admin);
  return { defaultOrg, systemKey, bootstrap };
}

export function newDefaultOrganization(now: number) {
  return { id: newId("org"), slug: DEFAULT_ORG_SLUG, name: "Default organization", createdAt: now };
}

export function newSystemKey(): { key: string; hash: string } {
  const key = generateToken();
  return { key, hash: sha256Hex(key) };
}

export function ensureDefaultOrganization(db: Db, now = Date.now()): { id: string; slug: string } {
  const existing = db.orm.select().from(organizations).where(eq(organizations.slug, DEFAULT_ORG_SLUG)).get();
  if (existing) return { id: existing.id, slug: existing.slug };
  const org = newDefaultOrganization(now);
  db.orm.insert(organizations).values(org).run();
  return { id: org.id, slug: org.slug };
}

export function resolveSystemKey(
  db: Db,
  configured: string | undefined,
  now = Date.now(),
): { hash: string; generated?: string } {
  if (configured !== undefined) return { hash: sha256Hex(configured) };
  const stored = db.orm.select().from(settings).where(eq(settings.key, SYSTEM_KEY_HASH)).get();
  if (stored) return { hash: stored.value };
  const { key, hash } = newSystemKey();
  db.orm.insert(settings).values({ key: SYSTEM_KEY_HASH, value: hash, updatedAt: now }).run();
  return { hash, generated: key };
}

/**
 * The server's: the statements above, synchronous inside. One SQLite process runs them without
 * interleaving, and several processes on one file each run them in a statement of their own.
 */
export class SqliteStartupStore implements StartupStore {
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  async ensureDefaultOrganization(): Promise<{ id: string; slug: string }> {
    return ensureDefaultOrganization(this.db, this.now());
  }

  async resolveSystemKey(configured: string | undefined): Promise<{ hash: string; generated?: string }> {
    return resolveSystemKey(this.db, configured, this.now());
  }
}
