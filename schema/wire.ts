/**
 * Wire schemas of the HTTP API (docs/interface.md §2.1–2.3), the single source of truth for their types.
 * Valibot validates every boundary; types are derived with `v.InferOutput`.
 */
import * as v from "valibot";
import { RUN_ID_PATTERN } from "./ids.ts";

export const PLANNER_MODEL = "planner-v0";
export const EXECUTION_TARGET = "local_terminal";

/** Longest redacted prompt accepted, in characters. The 64 KiB body limit bounds it too. */
export const MAX_PROMPT_CHARS = 16_000;

const uuid = (field: string) => v.pipe(v.string(), v.uuid(`${field} must be a UUID`));

export const planningRequestSchema = v.object({
  session_id: uuid("session_id"),
  turn_id: uuid("turn_id"),
  redacted_prompt: v.pipe(
    v.string("redacted_prompt must be a string"),
    // Not blank: a regex, so the check does not copy a prompt of up to 16,000 characters to trim it.
    v.regex(/\S/, "redacted_prompt must not be empty"),
    v.maxLength(MAX_PROMPT_CHARS, `redacted_prompt must be at most ${MAX_PROMPT_CHARS} characters`),
  ),
  /** The client's classification. Not trusted: the safety gate classifies again. */
  intent: v.pipe(v.string(), v.regex(/^[a-z][a-z0-9_]{0,63}$/, "intent must be a lower-case identifier")),
  route_context: v.looseObject({ hosted: v.boolean("route_context.hosted must be a boolean") }),
  safety_checks: v.pipe(v.array(v.pipe(v.string(), v.maxLength(128))), v.maxLength(32)),
  workspace_manifest: v.nullable(v.record(v.string(), v.unknown(), "workspace_manifest must be an object or null")),
});
export type PlanningRequest = v.InferOutput<typeof planningRequestSchema>;

export const toolPlanStepSchema = v.object({
  kind: v.string(),
  command: v.string(),
  purpose: v.string(),
  requires_auth: v.boolean(),
  blocked_reason: v.nullable(v.string()),
});
export type ToolPlanStep = v.InferOutput<typeof toolPlanStepSchema>;

export const planMetadataSchema = v.object({
  egress: v.string(),
  upstream_provider: v.string(),
  upstream_model: v.string(),
  classified_intent: v.string(),
});

/**
 * What a clinical block names as its reason (`metadata.blocked_category`): the kinds of clinical
 * judgement `health` refuses to give. The labelled safety corpus uses the same names.
 */
export const blockedCategories = [
  "symptom_assessment",
  "diagnosis",
  "second_opinion",
  "treatment_recommendation",
  "medication_change",
  "medication_dosing",
  "medication_interactions",
  "medication_side_effects",
  "result_interpretation",
  "mental_health",
  "pregnancy",
  "pediatrics",
  "urgency_triage",
  "insurance_coverage",
  "prior_authorization",
  "eligibility_benefits",
  "clinician_decision",
] as const;
export type BlockedCategory = (typeof blockedCategories)[number];

export const blockedMetadataSchema = v.object({
  upstream: v.literal("skipped"),
  blocked: v.literal("clinical_advice"),
  classified_intent: v.literal("clinical_blocked"),
  /** Always sent by this server; optional so a CLI can read an older server's answer. */
  blocked_category: v.optional(v.picklist(blockedCategories)),
});

export const planningResponseSchema = v.object({
  model: v.literal(PLANNER_MODEL),
  assistant_message: v.string(),
  tool_plan: v.array(toolPlanStepSchema),
  execution_target: v.literal(EXECUTION_TARGET),
  audit_id: v.pipe(v.string(), v.regex(/^cli-code-[0-9a-f-]{36}$/)),
  metadata: v.union([planMetadataSchema, blockedMetadataSchema]),
});
export type PlanningResponse = v.InferOutput<typeof planningResponseSchema>;

/**
 * What a planner (the embedded one or an upstream model) returns before the gateway adds the
 * envelope. Upstream replies are parsed leniently into this shape, then sanitized.
 */
export const draftPlanSchema = v.object({
  assistant_message: v.pipe(v.string(), v.maxLength(8_000)),
  tool_plan: v.pipe(
    v.array(
      v.object({
        kind: v.optional(v.pipe(v.string(), v.maxLength(32)), "other"),
        command: v.pipe(v.string(), v.maxLength(2_000)),
        purpose: v.optional(v.pipe(v.string(), v.maxLength(500)), ""),
        requires_auth: v.optional(v.boolean(), false),
      }),
    ),
    v.maxLength(20),
  ),
});
export type DraftPlan = v.InferOutput<typeof draftPlanSchema>;
export type DraftStep = DraftPlan["tool_plan"][number];

/** RFC 9457 problem details, with the closed `code` vocabulary of docs/interface.md §7. */
export const errorCodes = [
  "invalid_request",
  "unauthorized",
  "forbidden",
  "not_found",
  "payload_too_large",
  "unsupported_media_type",
  "idempotency_conflict",
  "rate_limited",
  "upstream_error",
  "upstream_timeout",
  "unavailable",
  "internal",
] as const;
export type ErrorCode = (typeof errorCodes)[number];

export const problemSchema = v.object({
  type: v.string(),
  title: v.string(),
  status: v.number(),
  detail: v.string(),
  code: v.picklist(errorCodes),
  errors: v.optional(v.array(v.object({ path: v.string(), message: v.string() }))),
});
export type Problem = v.InferOutput<typeof problemSchema>;

export const accountResponseSchema = v.object({
  company: v.string(),
  token_name: v.string(),
  scopes: v.array(v.string()),
  cli_version: v.nullable(v.string()),
  server_version: v.string(),
  rate_limit: v.object({
    minute: v.object({ limit: v.number(), remaining: v.number(), reset_seconds: v.number() }),
    day: v.object({ limit: v.number(), remaining: v.number(), reset_seconds: v.number() }),
  }),
});
export type AccountResponse = v.InferOutput<typeof accountResponseSchema>;

/** The answer to a trigger (docs/interface.md §2.5). */
export const triggerResponseSchema = v.object({
  runId: v.pipe(v.string(), v.regex(RUN_ID_PATTERN)),
  workflowInstanceId: v.string(),
});
export type TriggerResponse = v.InferOutput<typeof triggerResponseSchema>;
