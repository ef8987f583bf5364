/**
 * One turn of `health code`: classify, redact, plan and gate a prompt locally, and optionally
 * overlay the hosted planner's answer. Shared by the one-shot command and the REPL.
 *
 * Order matters for the boundary: the prompt is classified before anything else, a clinical
 * prompt is answered locally with the redirect and is never sent; only the redacted prompt (and
 * a redacted copy of the workspace manifest) ever leaves the machine.
 */
import * as v from "valibot";
import { checkCommand, sanitizePlan } from "../../core/gate.ts";
import { canonicalJson, sha256Hex } from "../../core/hash.ts";
import type { Intent } from "../../core/intents.ts";
import { blockedPlan, planLocally } from "../../core/planner.ts";
import { redact } from "../../core/redact.ts";
import { inspectPrompt } from "../../core/safety/inspect.ts";
import {
  type BlockedCategory,
  type PlanningRequest,
  type PlanningResponse,
  planningResponseSchema,
  type ToolPlanStep,
} from "../../schema/wire.ts";
import { problemDetail } from "../lib/api.ts";
import { CLI_VERSION } from "../lib/version.ts";

/** A plan step with the number it is shown and executed by (from 1). */
export type NumberedStep = { step: number } & ToolPlanStep;

/** What `health code --json` prints (docs/interface.md §12.4), and what a saved session holds for its latest turn. */
export interface Turn {
  session_id: string;
  turn_id: string;
  intent: Intent;
  redacted_prompt: string;
  assistant_message: string;
  tool_plan: NumberedStep[];
  hosted: boolean;
  audit_id?: string;
  /** What fired, when the safety boundary blocked the prompt. */
  blocked_category?: BlockedCategory;
}

export type Manifest = Record<string, unknown> | null;

export const SAFETY_CHECKS = ["developer-infrastructure-only"] as const;

export function numberSteps(steps: readonly ToolPlanStep[]): NumberedStep[] {
  return steps.map((step, index) => ({
    step: index + 1,
    kind: step.kind,
    command: step.command,
    purpose: step.purpose,
    requires_auth: step.requires_auth,
    blocked_reason: step.blocked_reason,
  }));
}

/** The server's own boundary (`core/safety/inspect.ts`), applied before anything is sent. */
export const inspect = inspectPrompt;

/** Redacts every string (keys too) of a manifest before it is planned with or sent. */
export function redactManifest(manifest: Manifest): Manifest {
  if (manifest === null) return null;
  return redactValue(manifest) as Record<string, unknown>;
}

function redactValue(value: unknown): unknown {
  if (typeof value === "string") return redact(value);
  if (Array.isArray(value)) return value.map(redactValue);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [redact(key), redactValue(item)]));
  }
  return value;
}

/** The offline planner: no network. */
export function planOffline(prompt: string, context: { sessionId: string; manifest: Manifest }): Turn {
  const { intent, category, redacted } = inspect(prompt);
  const draft =
    category !== null ? blockedPlan(category) : planLocally({ prompt: redacted, intent, manifest: context.manifest });
  const clean = sanitizePlan(draft);
  return {
    session_id: context.sessionId,
    turn_id: crypto.randomUUID(),
    intent,
    redacted_prompt: redacted,
    assistant_message: clean.assistant_message,
    tool_plan: intent === "clinical_blocked" ? [] : numberSteps(clean.tool_plan),
    hosted: false,
    ...(category === null ? {} : { blocked_category: category }),
  };
}

/** The request of docs/interface.md §2.1 for a turn planned locally first. */
export function planningRequest(turn: Turn, manifest: Manifest): PlanningRequest {
  return {
    session_id: turn.session_id,
    turn_id: turn.turn_id,
    redacted_prompt: turn.redacted_prompt,
    intent: turn.intent,
    route_context: { hosted: true },
    safety_checks: [...SAFETY_CHECKS],
    workspace_manifest: manifest,
  };
}

export interface HostedLogin {
  server: string;
  token: string;
  company: string | undefined;
}

/**
 * How a hosted call failed. `transient`: the server was unreachable, overloaded, rate-limited or
 * answered garbage; the local plan stands and trying again later may work. `refused`: the server
 * rejected the credentials or the request; trying again will not help until something changes.
 */
export interface HostedFailure {
  kind: "transient" | "refused";
  message: string;
}

export interface HostedTurn {
  turn: Turn;
  failure?: HostedFailure;
  /** True when the server's safety gate blocked a prompt the client did not. */
  blockedByServer?: boolean;
}

/** Long enough for an upstream model with retries behind the gateway. */
export const HOSTED_TIMEOUT_MS = 60_000;

/**
 * Plans locally, then asks the hosted planner and overlays its `assistant_message`, `tool_plan`
 * and `audit_id`. The local intent and redaction are kept. The body is sent in its canonical
 * JSON form, so the `Idempotency-Key` is exactly the SHA-256 of the bytes on the wire.
 */
export async function planHosted(
  prompt: string,
  context: { sessionId: string; manifest: Manifest; login: HostedLogin; timeoutMs?: number; signal?: AbortSignal },
): Promise<HostedTurn> {
  const local = planOffline(prompt, context);
  if (local.intent === "clinical_blocked") return { turn: local };
  const body = canonicalJson(planningRequest(local, context.manifest));
  const headers: Record<string, string> = {
    authorization: `Bearer ${context.login.token}`,
    "content-type": "application/json",
    "x-service-cli-version": CLI_VERSION,
    "idempotency-key": sha256Hex(body),
  };
  if (context.login.company !== undefined && context.login.company !== "")
    headers["x-service-company"] = context.login.company;

  let response: Response;
  try {
    const timeout = AbortSignal.timeout(context.timeoutMs ?? HOSTED_TIMEOUT_MS);
    response = await fetch(`${context.login.server}/cli/code/sessions`, {
      method: "POST",
      headers,
      body,
      signal: context.signal === undefined ? timeout : AbortSignal.any([context.signal, timeout]),
    });
  } catch (error) {
    const why =
      error instanceof Error && error.name === "TimeoutError" ? "it did not answer in time" : "the connection failed";
    return {
      turn: local,
      failure: { kind: "transient", message: `Cannot reach the health server at ${context.login.server}: ${why}` },
    };
  }
  if (!response.ok) return { turn: local, failure: await failureOf(response) };
  const parsed = v.safeParse(planningResponseSchema, await response.json().catch(() => undefined));
  if (!parsed.success) {
    return {
      turn: local,
      failure: { kind: "transient", message: "The hosted planner sent a response this CLI does not understand" },
    };
  }
  return overlay(local, parsed.output);
}

async function failureOf(response: Response): Promise<HostedFailure> {
  const { detail } = await problemDetail(response);
  const status = response.status;
  if (status === 401 || status === 403) {
    return {
      kind: "refused",
      message: `The server refused the stored token (${status}): ${detail}. Run health login --token <token>`,
    };
  }
  if (status === 429) {
    const retryAfter = response.headers.get("retry-after");
    const when = retryAfter !== null && /^\d+$/.test(retryAfter) ? ` (try again in ${retryAfter} s)` : "";
    return { kind: "transient", message: `The hosted planner's rate limit is reached${when}: ${detail}` };
  }
  const transient = status === 408 || status >= 500;
  return { kind: transient ? "transient" : "refused", message: `The hosted planner answered ${status}: ${detail}` };
}

/**
 * The server's plan replaces the local one. Its steps were gated server-side; they pass this
 * client's gate too before they are shown, so a step is never less blocked than either says.
 */
function overlay(local: Turn, response: PlanningResponse): HostedTurn {
  const blockedByServer = "blocked" in response.metadata && response.metadata.blocked === "clinical_advice";
  const category = "blocked" in response.metadata ? response.metadata.blocked_category : undefined;
  const steps = response.tool_plan.map(regate);
  return {
    turn: {
      ...local,
      ...(blockedByServer && category !== undefined ? { blocked_category: category } : {}),
      // The boundary only ever tightens: a prompt the server blocked is reported as blocked.
      intent: blockedByServer ? "clinical_blocked" : local.intent,
      assistant_message: response.assistant_message,
      tool_plan: blockedByServer ? [] : numberSteps(steps),
      hosted: true,
      audit_id: response.audit_id,
    },
    blockedByServer,
  };
}

function regate(step: ToolPlanStep): ToolPlanStep {
  if (step.blocked_reason !== null) return step;
  const verdict = checkCommand(step.command);
  return verdict.ok ? step : { ...step, blocked_reason: verdict.reason };
}
