/** Inputs of the admin tRPC procedures (auth, tokens, runs, device), validated at the boundary. */
import * as v from "valibot";
import {
  COMPANY_PATTERN,
  LOOP_ID_PATTERN,
  normalizeUserCode,
  RUN_ID_PATTERN,
  scopeSchema,
  TOKEN_ID_PATTERN,
} from "./ids.ts";
import { RUN_STATUSES } from "./statuses.ts";

// Control characters would let a name rewrite a terminal or a log line.
const noControl = (field: string) =>
  v.check((s: string) => !/[\u0000-\u001f\u007f-\u009f]/.test(s), `${field} must not contain control characters`);

export const emailSchema = v.pipe(v.string(), v.trim(), v.maxLength(254), v.email("email must be an email address"));
export const passwordSchema = v.pipe(
  v.string(),
  v.minLength(12, "password must be at least 12 characters"),
  v.maxLength(256, "password must be at most 256 characters"),
);

export const loginInput = v.object({ email: emailSchema, password: v.pipe(v.string(), v.maxLength(256)) });
export const setupInput = v.object({
  code: v.pipe(v.string(), v.maxLength(64)),
  email: emailSchema,
  password: passwordSchema,
});

export const tokenNameSchema = v.pipe(
  v.string(),
  v.trim(),
  v.minLength(1, "name must not be empty"),
  v.maxLength(100, "name must be at most 100 characters"),
  noControl("name"),
);

export const tokenCreateInput = v.object({
  name: tokenNameSchema,
  scopes: v.pipe(v.array(scopeSchema), v.minLength(1, "give at least one scope"), v.maxLength(10)),
});
export const tokenRevokeInput = v.object({
  id: v.pipe(v.string(), v.regex(TOKEN_ID_PATTERN, "id must be a token id (tok_…)")),
});

export const loopIdSchema = v.pipe(v.string(), v.regex(LOOP_ID_PATTERN, "loopId must be a loop id (loop_…)"));
export const runIdSchema = v.pipe(v.string(), v.regex(RUN_ID_PATTERN, "id must be a run id (run_…)"));
export const runStatusSchema = v.picklist(RUN_STATUSES);

export const runsListInput = v.optional(
  v.object({
    loopId: v.optional(loopIdSchema),
    status: v.optional(runStatusSchema),
    limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100))),
    cursor: v.optional(v.pipe(v.string(), v.maxLength(200))),
  }),
  {},
);
export const runIdInput = v.object({ id: runIdSchema });
/** `body` absent means the run's event.body is undefined, as for a bodiless trigger. */
export const runStartInput = v.object({ loopId: loopIdSchema, body: v.optional(v.unknown()) });

/** A device-link request's client name: what the approving admin is shown, so no control characters. */
export const deviceStartInput = v.optional(
  v.object({
    clientName: v.optional(
      v.pipe(
        v.string(),
        v.trim(),
        v.minLength(1, "clientName must not be empty"),
        v.maxLength(100, "clientName must be at most 100 characters"),
        noControl("clientName"),
      ),
    ),
  }),
  {},
);
// Only the length is checked: a malformed code answers like an unknown one, as RFC 8628 wants.
export const devicePollInput = v.object({ deviceCode: v.pipe(v.string(), v.maxLength(128)) });
export const userCodeSchema = v.pipe(
  v.string(),
  v.maxLength(32, "code must be 8 letters, such as BCDF-GHJK"),
  v.transform(normalizeUserCode),
  // Any 8 letters pass: a mistyped letter (a vowel the alphabet never uses) is a code that is not
  // found, which is what the person needs to hear, not a lesson in the alphabet.
  v.check((code) => /^[A-Z]{8}$/.test(code), "code must be 8 letters, such as BCDF-GHJK"),
);
export const deviceUserCodeInput = v.object({ userCode: userCodeSchema });

/** Windows the usage summary covers. */
export const USAGE_WINDOW_NAMES = ["1h", "24h", "7d", "30d"] as const;
export type UsageWindow = (typeof USAGE_WINDOW_NAMES)[number];
export const usageInput = v.object({
  window: v.optional(v.picklist(USAGE_WINDOW_NAMES, `window must be one of ${USAGE_WINDOW_NAMES.join(", ")}`), "24h"),
  /** Planning calls attributed to one company (the X-Service-Company of system-key calls, or a token's organization). */
  company: v.optional(
    v.pipe(v.string(), v.regex(COMPANY_PATTERN, "company must be a slug of letters, digits and dashes")),
  ),
  tokenId: v.optional(v.pipe(v.string(), v.regex(TOKEN_ID_PATTERN, "tokenId must be a token id (tok_…)"))),
  loopId: v.optional(loopIdSchema),
});
export type UsageInput = v.InferOutput<typeof usageInput>;
