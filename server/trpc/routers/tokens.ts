/** API tokens of the signed-in admin's organization (docs/interface.md §2.4, §4.3). */
import { TRPCError } from "@trpc/server";
import { tokenCreateInput, tokenRevokeInput } from "../../../schema/admin.ts";
import { adminProcedure, router } from "../trpc.ts";

export const tokensRouter = router({
  create: adminProcedure.input(tokenCreateInput).mutation(({ ctx, input }) =>
    ctx.tokens.create({
      orgId: ctx.session.orgId,
      name: input.name,
      scopes: input.scopes,
      actor: { kind: "user", id: ctx.session.userId },
    }),
  ),

  list: adminProcedure.query(({ ctx }) => ctx.tokens.list(ctx.session.orgId)),

  revoke: adminProcedure.input(tokenRevokeInput).mutation(async ({ ctx, input }) => {
    const revoked = await ctx.tokens.revoke({
      orgId: ctx.session.orgId,
      id: input.id,
      actor: { kind: "user", id: ctx.session.userId },
    });
    if (revoked.ok) return revoked.value;
    throw revoked.error === "not_found"
      ? new TRPCError({ code: "NOT_FOUND", message: `No token ${input.id} in this organization` })
      : new TRPCError({ code: "CONFLICT", message: `Token ${input.id} is already revoked` });
  }),
});
