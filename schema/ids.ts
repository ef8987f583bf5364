/**
 * Identifier shapes and the token scopes built on them, once. `loop_` + a file stem names a loop;
 * `run_` + 24 base62 characters names a run (core/ids.ts makes them).
 */
import * as v from "valibot";

export const LOOP_ID_PATTERN = /^loop_[A-Za-z0-9_-]{1,64}$/;
export const RUN_ID_PATTERN = /^run_[A-Za-z0-9]{1,64}$/;
export const TOKEN_ID_PATTERN = /^tok_[A-Za-z0-9]{1,64}$/;
/** Who a planning call is attributed to: an organization's slug, or a system-key caller's X-Service-Company. */
export const COMPANY_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** `loop:run` (every loop of the organization), `loop:run:<loopId>`, `cli:run` (hosted planning). */
export const scopeSchema = v.pipe(
  v.string(),
  v.check(
    (s) => s === "loop:run" || s === "cli:run" || (s.startsWith("loop:run:") && LOOP_ID_PATTERN.test(s.slice(9))),
    "scope must be loop:run, loop:run:<loopId> (loop_…) or cli:run",
  ),
);
export type Scope = v.InferOutput<typeof scopeSchema>;

/** What people type for a device code: any case, with or without the dash, with stray spaces. */
export const normalizeUserCode = (input: string): string => input.toUpperCase().replace(/[\s-]/g, "");
