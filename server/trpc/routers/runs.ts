/** Runs of the signed-in admin's organization: start one as the user, list, read, terminate. */
import { TRPCError } from "@trpc/server";
import { runIdInput, runStartInput, runsListInput } from "../../../schema/admin.ts";
import { jsonDepth, MAX_JSON_DEPTH } from "../../routes/loops.ts";
import { adminProcedure, authedProcedure, router } from "../trpc.ts";

export const runsRouter = router({
  list: authedProcedure.input(runsListInput).query(async ({ ctx, input }) => {
    const page = await ctx.engine.list(ctx.session.orgId, input);
    if (!page.ok) throw new TRPCError({ code: "BAD_REQUEST", message: page.error.message });
    return page.value;
  }),

  get: authedProcedure.input(runIdInput).query(async ({ ctx, input }) => {
    const run = await ctx.engine.get(ctx.session.orgId, input.id);
    if (run === null) throw new TRPCError({ code: "NOT_FOUND", message: `No run ${input.id} in this organization` });
    return run;
  }),

  start: adminProcedure.input(runStartInput).mutation(({ ctx, input }) => {
    if (ctx.catalog.get(ctx.session.orgId, input.loopId) === undefined) {
      throw new TRPCError({ code: "NOT_FOUND", message: `No loop ${input.loopId} in this organization` });
    }
    if (jsonDepth(input.body) > MAX_JSON_DEPTH) {
      throw new TRPCError({ code: "BAD_REQUEST", message: `body: nested deeper than ${MAX_JSON_DEPTH} levels` });
    }
    return ctx.engine.enqueue({
      orgId: ctx.session.orgId,
      loopId: input.loopId,
      input: input.body,
      trigger: { kind: "user", id: ctx.session.userId, name: ctx.session.email },
    });
  }),

  terminate: adminProcedure.input(runIdInput).mutation(async ({ ctx, input }) => {
    const outcome = await ctx.engine.terminate(ctx.session.orgId, input.id);
    if (!outcome.ok) {
      throw new TRPCError({
        code: outcome.error.code === "not_found" ? "NOT_FOUND" : "CONFLICT",
        message: outcome.error.message,
      });
    }
    await ctx.adminAudit.record({
      orgId: ctx.session.orgId,
      actor: { kind: "user", id: ctx.session.userId },
      action: "run.terminate",
      targetId: input.id,
    });
    return outcome.value;
  }),
});
