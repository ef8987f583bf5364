/**
 * Device-link sign-in (RFC 8628 adapted): `health login` starts and polls without a session; a
 * signed-in admin looks the user code up and approves or denies it from the console.
 */
import { TRPCError } from "@trpc/server";
import { formatUserCode } from "../../../core/device-codes.ts";
import { deviceStartInput, devicePollInput, deviceUserCodeInput } from "../../../schema/admin.ts";
import {
  DEFAULT_CLIENT_NAME,
  DEVICE_LOGIN_TTL_MS,
  DEVICE_POLL_INTERVAL_SECONDS,
  type DeviceDecisionError,
} from "../../services/device-logins.ts";
import type { SessionUser } from "../../services/accounts.ts";
import { authedProcedure, publicProcedure, router, throttled, type TrpcContext } from "../trpc.ts";

/** Where the console's approval page lives; `?code=` fills the code in. */
export const DEVICE_PAGE_PATH = "/admin/device";

function decisionError(error: DeviceDecisionError, userCode: string): TRPCError {
  switch (error) {
    case "not_found":
      return new TRPCError({
        code: "NOT_FOUND",
        message: `No sign-in request has the code ${userCode}: check it against your terminal, or run health login again if it expired`,
      });
    case "expired":
      return new TRPCError({
        code: "NOT_FOUND",
        message: `The code ${userCode} has expired; run health login again for a new one`,
      });
    case "already_approved":
      return new TRPCError({ code: "CONFLICT", message: `The code ${userCode} was already approved` });
    case "already_denied":
      return new TRPCError({ code: "CONFLICT", message: `The code ${userCode} was already denied` });
  }
}

/** Approves or denies as the signed-in user, in the organization of their session. */
async function decide(ctx: TrpcContext & { session: SessionUser }, userCode: string, decision: "approve" | "deny") {
  const decided = await ctx.deviceLogins.decide({
    userCode,
    decision,
    userId: ctx.session.userId,
    orgId: ctx.session.orgId,
  });
  if (decided.ok) return decided.value;
  throw decisionError(decided.error, formatUserCode(userCode));
}

export const deviceRouter = router({
  start: publicProcedure.input(deviceStartInput).mutation(async ({ ctx, input }) => {
    if (!(await throttled(ctx, ctx.deviceStartLimiter.take(ctx.clientAddress)))) {
      throw new TRPCError({
        code: "TOO_MANY_REQUESTS",
        message: "Too many sign-in requests from this address; wait a minute",
      });
    }
    const started = await ctx.deviceLogins.start(input.clientName ?? DEFAULT_CLIENT_NAME);
    const verificationUri = `${ctx.origin}${DEVICE_PAGE_PATH}`;
    return {
      deviceCode: started.deviceCode,
      userCode: started.userCode,
      verificationUri,
      verificationUriComplete: `${verificationUri}?code=${encodeURIComponent(started.userCode)}`,
      expiresIn: DEVICE_LOGIN_TTL_MS / 1000,
      interval: DEVICE_POLL_INTERVAL_SECONDS,
    };
  }),

  // A mutation, not a query: the device code is a secret and belongs in a POST body, never in a URL.
  poll: publicProcedure.input(devicePollInput).mutation(({ ctx, input }) => ctx.deviceLogins.poll(input.deviceCode)),

  lookup: authedProcedure.input(deviceUserCodeInput).query(async ({ ctx, input }) => {
    const found = await ctx.deviceLogins.find(input.userCode);
    if (found.ok) return found.value;
    throw decisionError(found.error, formatUserCode(input.userCode));
  }),

  // Any signed-in user may approve: the CLI gets a session of that same user and role, nothing more.
  approve: authedProcedure
    .input(deviceUserCodeInput)
    .mutation(({ ctx, input }) => decide(ctx, input.userCode, "approve")),

  deny: authedProcedure.input(deviceUserCodeInput).mutation(({ ctx, input }) => decide(ctx, input.userCode, "deny")),
});
