/**
 * The admin audit (admin_audit): who did what to tokens, sessions, device logins and runs. What a
 * store of it does, whatever the database; implementations admin-audit-sqlite.ts (the server's)
 * and admin-audit-postgres.ts, one suite over both (test/account-store.test.ts). The other stores
 * write their audit row in the transaction of the change it records, through their dialect's
 * `writeAudit`; this interface is for changes made elsewhere (a run terminated by the engine).
 */
import type { adminAudit } from "../../schema/tables.ts";

export interface Actor {
  kind: (typeof adminAudit.$inferSelect)["actorKind"];
  id: string;
}

/** Every action the audit records; a closed list, so a typo is a compile error. */
export type AdminAction =
  | "token.create"
  | "token.revoke"
  | "session.create"
  | "device_login.approve"
  | "device_login.deny"
  | "run.terminate";

export interface AuditEntry {
  orgId: string;
  actor: Actor;
  action: AdminAction;
  targetId: string | null;
  at: number;
}

/** Both dialects' tables infer this same insert row (test/schema-dialects.test.ts). */
export function auditRow(entry: AuditEntry): typeof adminAudit.$inferInsert {
  return {
    orgId: entry.orgId,
    actorKind: entry.actor.kind,
    actorId: entry.actor.id,
    action: entry.action,
    targetId: entry.targetId,
    at: entry.at,
  };
}

export interface AdminAudit {
  /** Records one action now; committed when the promise resolves. */
  record(entry: Omit<AuditEntry, "at">): Promise<void>;
}
