/** Who did what to tokens, users, sessions and runs, in the SQLite database (admin_audit). */
import { adminAudit } from "../../schema/tables.ts";
import type { Db } from "../db.ts";
import type { Actor } from "./tokens.ts";

export function audit(
  db: Db,
  orgId: string,
  actor: Actor,
  action: string,
  targetId: string | null,
  at = Date.now(),
): void {
  db.orm.insert(adminAudit).values({ orgId, actorKind: actor.kind, actorId: actor.id, action, targetId, at }).run();
}
