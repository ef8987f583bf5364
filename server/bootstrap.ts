/**
 * First-start set-up: the default organization and the system key. A generated system key is
 * returned once so start-up can print it; only its hash is kept.
 */
import { eq } from "drizzle-orm";
import { sha256Hex } from "../core/hash.ts";
import { newId } from "../core/ids.ts";
import { generateToken } from "../core/tokens.ts";
import { organizations, settings } from "../schema/tables.ts";
import type { Db } from "./db.ts";

export const DEFAULT_ORG_SLUG = "default";

export function ensureDefaultOrganization(db: Db): { id: string; slug: string } {
  const existing = db.orm.select().from(organizations).where(eq(organizations.slug, DEFAULT_ORG_SLUG)).get();
  if (existing) return { id: existing.id, slug: existing.slug };
  const org = { id: newId("org"), slug: DEFAULT_ORG_SLUG, name: "Default organization", createdAt: Date.now() };
  db.orm.insert(organizations).values(org).run();
  return { id: org.id, slug: org.slug };
}

/**
 * The configured key wins. Otherwise the stored hash; otherwise a new key, whose plaintext is
 * returned (`generated`) exactly this once.
 */
export function resolveSystemKey(db: Db, configured: string | undefined): { hash: string; generated?: string } {
  if (configured !== undefined) return { hash: sha256Hex(configured) };
  const stored = db.orm.select().from(settings).where(eq(settings.key, "system_key_hash")).get();
  if (stored) return { hash: stored.value };
  const key = generateToken();
  const hash = sha256Hex(key);
  db.orm.insert(settings).values({ key: "system_key_hash", value: hash, updatedAt: Date.now() }).run();
  return { hash, generated: key };
}
