/**
 * tRPC, initialised once: the context (the stores, the signed-in admin if any), procedures by
 * role, and an error formatter that exposes every validation issue, not only the first.
 */
import { initTRPC, TRPCError } from "@trpc/server";
import type { Engine } from "../../core/loop/engine.ts";
import { type FieldError, flattenIssues, type StandardIssue } from "../../schema/issues.ts";
import type { LoopCatalog } from "../services/loop-catalog.ts";
import type { UsageReader } from "../services/usage.ts";
import type { AccountStore, LoginLimiter, SessionUser } from "../services/accounts.ts";
import type { AdminAudit } from "../services/admin-audit.ts";
import type { DeviceLoginStore, DeviceStartLimiter } from "../services/device-logins.ts";
import type { TokenStore } from "../services/tokens.ts";
import { REDIS_RETRY_AFTER_SECONDS, RedisUnavailableError } from "../../core/redis.ts";
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from "../db-errors.ts";

export interface TrpcContext {
  accounts: AccountStore;
  tokens: TokenStore;
  deviceLogins: DeviceLoginStore;
  /** For what no store audits itself (a run terminated through the engine). */
  adminAudit: AdminAudit;
  defaultOrg: { id: string; slug: string };
  loginLimiter: LoginLimiter;
  /** Unauthenticated device-link starts per client address. */
  deviceStartLimiter: DeviceStartLimiter;
  session: SessionUser | null;
  engine: Engine;
  catalog: LoopCatalog;
  /** Reads the usage rollups (server/services/usage.ts). */
  usage: UsageReader;
  /** The server's origin as the client sees it, for trigger URLs. */
  origin: string;
  clientAddress: string;
  secureCookies: boolean;
  resHeaders: Headers;
}

function issuesOf(cause: unknown): FieldError[] | undefined {
  const issues = (cause as { issues?: unknown } | undefined)?.issues;
  return Array.isArray(issues) ? flattenIssues(issues as StandardIssue[]) : undefined;
}

const t = initTRPC.context<TrpcContext>().create({
  errorFormatter({ shape, error }) {
    // Never ship a stack trace to a client.
    const { stack: _stack, ...data } = shape.data;
    const issues = error.code === "BAD_REQUEST" ? issuesOf(error.cause) : undefined;
    const message =
      issues && issues.length > 0 ? issues.map((i) => `${i.path || "input"}: ${i.message}`).join("; ") : shape.message;
    return {
      ...shape,
      message: error.code === "INTERNAL_SERVER_ERROR" ? "The server failed to handle this request" : message,
      data: { ...data, issues },
    };
  },
});

export const router = t.router;

/** The refusal of a call the database cannot answer right now: 503 with Retry-After. */
export function databaseUnavailable(resHeaders: Headers, cause: unknown): TRPCError {
  resHeaders.set("retry-after", String(DATABASE_RETRY_AFTER_SECONDS));
  return new TRPCError({
    code: "SERVICE_UNAVAILABLE",
    message: "The database cannot be reached right now; retry shortly",
    cause,
  });
}

/**
 * A call that failed because the database cannot be reached (PostgreSQL down or out of
 * connections) is a 503 with Retry-After, as a planning request's would be, not a 500: the console
 * and the CLI say to retry. Any other failure passes through untouched.
 */
const databaseAvailable = t.middleware(async function databaseAvailable({ ctx, next }) {
  const result = await next();
  if (!result.ok && isDatabaseUnavailable(result.error.cause ?? result.error)) {
    throw databaseUnavailable(ctx.resHeaders, result.error);
  }
  return result;
});

export const publicProcedure = t.procedure.use(databaseAvailable);

export const authedProcedure = publicProcedure.use(function requireSession({ ctx, next }) {
  if (ctx.session === null) throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in first" });
  return next({ ctx: { ...ctx, session: ctx.session } });
});

/** Owners and admins manage tokens; members can only read. */
export const adminProcedure = authedProcedure.use(function requireAdmin({ ctx, next }) {
  if (ctx.session.role === "member") throw new TRPCError({ code: "FORBIDDEN", message: "Admins only" });
  return next();
});

/**
 * The answer of a sign-in or device-link throttle. One that cannot answer (Redis unreachable)
 * refuses the call, 503 with Retry-After, rather than let an attempt through unthrottled.
 */
export async function throttled<T>(ctx: TrpcContext, answer: Promise<T>): Promise<T> {
  try {
    return await answer;
  } catch (error) {
    if (!(error instanceof RedisUnavailableError)) throw error;
    ctx.resHeaders.set("retry-after", String(REDIS_RETRY_AFTER_SECONDS));
    throw new TRPCError({
      code: "SERVICE_UNAVAILABLE",
      message: "Sign-in throttling cannot reach its store; retry shortly",
      cause: error,
    });
  }
}
