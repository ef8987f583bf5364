/**
 * The one authorization function. Every endpoint and procedure that acts for a token asks
 * it; nothing else compares organizations or scopes.
 */
import type { planAudit } from "../schema/tables.ts";

export interface Principal {
  kind: (typeof planAudit.$inferSelect)["principalKind"];
  /** Token id, or `system` for the system key. */
  id: string;
  name: string;
  orgId: string;
  orgSlug: string;
  scopes: readonly string[];
}

export type Action =
  | { kind: "cli:run" }
  | { kind: "loop:run"; orgId: string; loopId: string }
  /** The gateway's own metrics, across every organization: the operator's, so the system key's only. */
  | { kind: "metrics:read" };

export type Verdict = { ok: true } | { ok: false; reason: string };

export function authorize(principal: Principal, action: Action): Verdict {
  switch (action.kind) {
    case "metrics:read":
      return principal.kind === "system" ? { ok: true } : { ok: false, reason: "metrics are read with the system key" };
    case "cli:run":
      return principal.scopes.includes("cli:run") ? { ok: true } : { ok: false, reason: "token lacks scope cli:run" };
    case "loop:run": {
      // Organization first, and the same answer whatever the loop: a token must not learn
      // whether another organization's loop exists.
      if (principal.orgId !== action.orgId) return { ok: false, reason: "token belongs to another organization" };
      const allowed = principal.scopes.some((s) => s === "loop:run" || s === `loop:run:${action.loopId}`);
      return allowed ? { ok: true } : { ok: false, reason: `token lacks scope loop:run:${action.loopId}` };
    }
  }
}
