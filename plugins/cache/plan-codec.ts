/**
 * A PlanResult as JSON for a shared cache, validated when read back: what comes out of Redis is
 * input like any other (another version of the gateway may have written it).
 */
import * as v from "valibot";
import { PlanResult } from "../../http/plan-result.ts";
import { blockedCategories, draftPlanSchema } from "../../schema/wire.ts";
import type { CacheCodec } from "./redis-store.ts";

const storedPlanSchema = v.object({
  draft: draftPlanSchema,
  route: v.nullable(v.object({ egress: v.string(), provider: v.string(), model: v.string() })),
  blockedCategory: v.nullable(v.picklist(blockedCategories)),
});

export const planResultCodec: CacheCodec<PlanResult> = {
  encode: (result) =>
    JSON.stringify({ draft: result.draft, route: result.route, blockedCategory: result.blockedCategory }),
  decode(text) {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return undefined;
    }
    const parsed = v.safeParse(storedPlanSchema, json);
    if (!parsed.success) return undefined;
    return new PlanResult(parsed.output.draft, parsed.output.route, parsed.output.blockedCategory);
  },
};
