/** Sign-in for admins: the console gets an httpOnly cookie, the CLI the session secret. */
import { TRPCError } from "@trpc/server";
import { completeSetup, verifyPassword } from "../../services/accounts.ts";
import { loginInput, setupInput } from "../../../schema/admin.ts";
import { authedProcedure, publicProcedure, router, throttled, type TrpcContext } from "../trpc.ts";

export const SESSION_COOKIE = "health_session";

function setSessionCookie(ctx: TrpcContext, token: string, expiresAt: number): void {
  const maxAge = Math.max(0, Math.floor((expiresAt - Date.now()) / 1000));
  const secure = ctx.secureCookies ? "; Secure" : "";
  ctx.resHeaders.append(
    "set-cookie",
    `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure}`,
  );
}

export const authRouter = router({
  /** Whether the first admin still has to be created with the setup code. */
  status: publicProcedure.query(async ({ ctx }) => ({ needsSetup: (await ctx.accounts.userCount()) === 0 })),

  setup: publicProcedure.input(setupInput).mutation(async ({ ctx, input }) => {
    const created = await completeSetup(ctx.accounts, ctx.defaultOrg.id, input);
    if (!created.ok) {
      const message = {
        already_set_up: "An admin already exists; sign in instead",
        invalid_code: "The setup code is wrong",
        email_taken: "That email is taken",
      }[created.error];
      throw new TRPCError({ code: created.error === "invalid_code" ? "UNAUTHORIZED" : "CONFLICT", message });
    }
    const session = await ctx.accounts.createSession(created.value.id);
    setSessionCookie(ctx, session.token, session.expiresAt);
    return { sessionToken: session.token, expiresAt: new Date(session.expiresAt).toISOString() };
  }),

  login: publicProcedure.input(loginInput).mutation(async ({ ctx, input }) => {
    const keys = [`email:${input.email.toLowerCase()}`, `ip:${ctx.clientAddress}`];
    if (await throttled(ctx, ctx.loginLimiter.blocked(keys))) {
      throw new TRPCError({ code: "TOO_MANY_REQUESTS", message: "Too many failed sign-ins; wait 15 minutes" });
    }
    const userId = await verifyPassword(ctx.accounts, input.email, input.password);
    if (userId === null) {
      await throttled(ctx, ctx.loginLimiter.fail(keys));
      throw new TRPCError({ code: "UNAUTHORIZED", message: "Wrong email or password" });
    }
    // Clearing the failures is a courtesy: a sign-in that succeeded is not refused for want of it.
    await ctx.loginLimiter.succeed(keys).catch(() => {});
    const session = await ctx.accounts.createSession(userId);
    setSessionCookie(ctx, session.token, session.expiresAt);
    return { sessionToken: session.token, expiresAt: new Date(session.expiresAt).toISOString() };
  }),

  logout: authedProcedure.mutation(async ({ ctx }) => {
    await ctx.accounts.deleteSession(ctx.session.sessionId);
    ctx.resHeaders.append("set-cookie", `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`);
    return { ok: true as const };
  }),

  me: authedProcedure.query(({ ctx }) => ({
    email: ctx.session.email,
    role: ctx.session.role,
    org: { id: ctx.session.orgId, slug: ctx.session.orgSlug, name: ctx.session.orgName },
    expiresAt: new Date(ctx.session.expiresAt).toISOString(),
  })),
});
