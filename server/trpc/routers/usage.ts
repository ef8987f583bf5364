/**
 * Usage of the signed-in admin's organization over a window, from the per-minute rollups
 * (server/services/usage.ts): planning calls, cache, clinical blocks, 429s, upstream failures,
 * latency, runs and the loops that fail most. Counts and ids only, never a prompt.
 */
import { usageInput } from "../../../schema/admin.ts";
import { authedProcedure, router } from "../trpc.ts";

export const usageRouter = router({
  summary: authedProcedure.input(usageInput).query(({ ctx, input }) => ctx.usage(ctx.session.orgId, input)),
});
