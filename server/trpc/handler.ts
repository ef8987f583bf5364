/**
 * Mounts tRPC's own fetch adapter (@elysiajs/trpc bundles tRPC v10: docs/stack.md, "tRPC v11"). The session
 * comes from the httpOnly cookie (console) or `Authorization: Bearer hss_…` (CLI).
 */
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import type { Engine } from "../../core/loop/engine.ts";
import type { LoopCatalog } from "../services/loop-catalog.ts";
import { type AccountStore, type LoginLimiter, resolveSession } from "../services/accounts.ts";
import type { AdminAudit } from "../services/admin-audit.ts";
import type { DeviceLoginStore, DeviceStartLimiter } from "../services/device-logins.ts";
import type { TokenStore } from "../services/tokens.ts";
import type { UsageReader } from "../services/usage.ts";
import { SESSION_COOKIE } from "./routers/auth.ts";
import { appRouter } from "./routers/_app.ts";
import { databaseUnavailable, type TrpcContext } from "./trpc.ts";
import { isDatabaseUnavailable } from "../db-errors.ts";

export interface TrpcHandlerOptions {
  /** The usage rollups: `createUsageReader` (SQLite) or `postgresUsageReader`. */
  usageReader: UsageReader;
  accounts: AccountStore;
  tokens: TokenStore;
  deviceLogins: DeviceLoginStore;
  adminAudit: AdminAudit;
  defaultOrg: { id: string; slug: string };
  loginLimiter: LoginLimiter;
  /** Unauthenticated device-link starts per client address. */
  deviceStartLimiter: DeviceStartLimiter;
  engine: Engine;
  catalog: LoopCatalog;
}

function sessionSecret(request: Request): string | null {
  const bearer = /^Bearer\s+(hss_\S+)$/i.exec(request.headers.get("authorization") ?? "")?.[1];
  if (bearer) return bearer;
  const cookies = request.headers.get("cookie") ?? "";
  for (const part of cookies.split(";")) {
    const [name, ...value] = part.trim().split("=");
    if (name === SESSION_COOKIE) return value.join("=");
  }
  return null;
}

/** The session behind `secret`; a database out of reach refuses the call (503), as procedures do. */
async function sessionOrUnavailable(accounts: AccountStore, secret: string, resHeaders: Headers) {
  try {
    return await resolveSession(accounts, secret);
  } catch (error) {
    if (!isDatabaseUnavailable(error)) throw error;
    throw databaseUnavailable(resHeaders, error);
  }
}

export function trpcHandler(options: TrpcHandlerOptions) {
  const usage = options.usageReader;
  return (request: Request, clientAddress: string) =>
    fetchRequestHandler({
      // Elysia strips the mount prefix only with AOT on; tell tRPC which one it sees.
      endpoint: new URL(request.url).pathname.startsWith("/trpc/") ? "/trpc" : "",
      req: request,
      router: appRouter,
      createContext: async ({ resHeaders }): Promise<TrpcContext> => {
        const secret = sessionSecret(request);
        return {
          accounts: options.accounts,
          tokens: options.tokens,
          deviceLogins: options.deviceLogins,
          adminAudit: options.adminAudit,
          defaultOrg: options.defaultOrg,
          loginLimiter: options.loginLimiter,
          deviceStartLimiter: options.deviceStartLimiter,
          engine: options.engine,
          catalog: options.catalog,
          usage,
          origin: new URL(request.url).origin,
          session: secret === null ? null : await sessionOrUnavailable(options.accounts, secret, resHeaders),
          clientAddress,
          secureCookies: new URL(request.url).protocol === "https:",
          resHeaders,
        };
      },
    });
}
