/** The loops of the signed-in admin's organization, with their trigger URLs. */
import { authedProcedure, router } from "../trpc.ts";

export const loopsRouter = router({
  list: authedProcedure.query(({ ctx }) =>
    ctx.catalog.list(ctx.session.orgId).map((loop) => ({
      id: loop.id,
      name: loop.name,
      orgId: ctx.session.orgId,
      triggerUrl: `${ctx.origin}/loop/${ctx.session.orgId}/${loop.id}`,
    })),
  ),
});
