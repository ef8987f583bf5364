/**
 * The loops of the signed-in admin's organization, with their trigger URLs and the last day's
 * runs, and the modules of its loops folder that were skipped (with the place to fix them).
 */
import { authedProcedure, router } from "../trpc.ts";

const DAY_MS = 24 * 60 * 60 * 1000;

export const loopsRouter = router({
  list: authedProcedure.query(({ ctx }) =>
    Promise.all(
      ctx.catalog.list(ctx.session.orgId).map(async (loop) => ({
        id: loop.id,
        name: loop.name,
        orgId: ctx.session.orgId,
        triggerUrl: `${ctx.origin}/loop/${ctx.session.orgId}/${loop.id}`,
        lastDay: await ctx.engine.loopStats(ctx.session.orgId, loop.id, DAY_MS),
      })),
    ),
  ),

  skipped: authedProcedure.query(({ ctx }) => ctx.catalog.skipped(ctx.session.orgId)),
});
