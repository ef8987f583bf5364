/**
 * Start-up's writes over PostgreSQL (the interface and the SQLite store: bootstrap.ts). Instances
 * starting at once on one empty database each try one `INSERT … ON CONFLICT DO NOTHING` and then
 * read what won, so there is one default organization and one system key, and only the instance
 * whose key was stored is told its plaintext (test/startup-store.test.ts races them).
 */
import { sha256Hex } from "../core/hash.ts";
import { eq } from "drizzle-orm";
import { organizations, settings } from "../schema/pg-tables.ts";
import {
  DEFAULT_ORG_SLUG,
  newDefaultOrganization,
  newSystemKey,
  SYSTEM_KEY_HASH,
  type StartupStore,
} from "./bootstrap.ts";
import type { PgDb } from "./db-postgres.ts";

export class PostgresStartupStore implements StartupStore {
  constructor(
    private readonly db: PgDb,
    private readonly now: () => number = Date.now,
  ) {}

  async ensureDefaultOrganization(): Promise<{ id: string; slug: string }> {
    const orm = this.db.orm;
    await orm.insert(organizations).values(newDefaultOrganization(this.now())).onConflictDoNothing();
    const [org] = await orm
      .select({ id: organizations.id, slug: organizations.slug })
      .from(organizations)
      .where(eq(organizations.slug, DEFAULT_ORG_SLUG));
    if (org === undefined) throw new Error("the default organization was neither made nor found");
    return org;
  }

  async resolveSystemKey(configured: string | undefined): Promise<{ hash: string; generated?: string }> {
    if (configured !== undefined) return { hash: sha256Hex(configured) };
    const orm = this.db.orm;
    const [stored] = await orm.select().from(settings).where(eq(settings.key, SYSTEM_KEY_HASH));
    if (stored) return { hash: stored.value };
    const { key, hash } = newSystemKey();
    const won = await orm
      .insert(settings)
      .values({ key: SYSTEM_KEY_HASH, value: hash, updatedAt: this.now() })
      .onConflictDoNothing()
      .returning({ key: settings.key });
    if (won.length > 0) return { hash, generated: key };
    const [other] = await orm.select().from(settings).where(eq(settings.key, SYSTEM_KEY_HASH));
    if (other === undefined) throw new Error("the system key's hash was neither stored nor found");
    return { hash: other.value };
  }
}
