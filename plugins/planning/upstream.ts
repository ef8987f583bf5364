/**
 * The planner behind the gateway. With no HEALTH_UPSTREAM_URL it is the embedded rule-based
 * planner, so a fresh server plans offline. Otherwise an OpenAI-compatible chat-completions
 * API (normally a gateway in front of OpenRouter), asked for a JSON plan with a stable system
 * prompt, parsed strictly, retried with jitter on 429/5xx and bounded by a deadline.
 */
import * as v from "valibot";
import type { Intent } from "../../core/intents.ts";
import { planLocally } from "../../core/planner.ts";
import { err, ok, type Result } from "../../core/result.ts";
import { type DraftPlan, draftPlanSchema } from "../../schema/wire.ts";
import { PlanResult } from "../../http/plan-result.ts";

export interface UpstreamRequest {
  prompt: string;
  intent: Intent;
  manifest: Record<string, unknown> | null;
}

export interface UpstreamFailure {
  kind: "error" | "timeout";
  /** Safe to show: never the prompt, the key or the upstream's body. */
  detail: string;
}

export interface Upstream {
  /** The configured model, part of the cache key. */
  readonly model: string;
  plan(request: UpstreamRequest): Promise<Result<PlanResult, UpstreamFailure>>;
}

export function embeddedUpstream(): Upstream {
  const route = { egress: "embedded", provider: "health", model: "planner-v0-rules" };
  return {
    model: route.model,
    async plan(request) {
      return ok(new PlanResult(planLocally(request), route));
    },
  };
}

export const SYSTEM_PROMPT = `You are planner-v0, the planning service of the \`health\` CLI, developer infrastructure for builders of agent loops in healthcare.
You never give clinical advice: no diagnoses, treatments, prescribing, dosing or benefit verification.
From the builder's redacted request, answer with ONLY a JSON object, no prose and no code fence:
{"assistant_message": string, "tool_plan": [{"kind": string, "command": string, "purpose": string, "requires_auth": boolean}]}
- assistant_message: markdown, at most 6 short lines: what would be done and why.
- tool_plan: ordered steps; kind is one of scaffold, route, tools, build, verify, auth.
- Every command starts with "health " and uses only: init <name> --channel <sms|email|fax|web|voice>; route --task <task> --prompt "<text>" --save --name <name>; tools list; agent build; verify; login; code.
- Never use shell metacharacters (; & | \` $ < >) or newlines in a command. Names are lowercase letters, digits and dashes.`;

export interface OpenAiUpstreamOptions {
  baseUrl: string;
  apiKey?: string;
  model: string;
  timeoutMs: number;
  retries: number;
  fetch?: typeof fetch;
  /** Sleeps between retries; injectable so tests need not wait. */
  sleep?: (ms: number) => Promise<void>;
}

const completionSchema = v.object({
  model: v.optional(v.string()),
  provider: v.optional(v.string()),
  choices: v.pipe(v.array(v.object({ message: v.object({ content: v.nullable(v.string()) }) })), v.minLength(1)),
});

/** Pulls the JSON object out of a model reply that may wrap it in a fence or in prose. */
export function extractJsonObject(text: string): unknown {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text);
  const candidate = (fenced?.[1] ?? text).trim();
  const start = candidate.indexOf("{");
  const end = candidate.lastIndexOf("}");
  if (start === -1 || end <= start) return undefined;
  try {
    return JSON.parse(candidate.slice(start, end + 1));
  } catch {
    return undefined;
  }
}

export function parseDraft(content: string): DraftPlan | undefined {
  const parsed = v.safeParse(draftPlanSchema, extractJsonObject(content));
  return parsed.success ? parsed.output : undefined;
}

class RetryableFailure {
  constructor(
    readonly detail: string,
    readonly retryAfterMs?: number,
  ) {}
}

/** Full jitter: uniform in [0, base * 2^attempt], capped. */
const backoffMs = (attempt: number) => Math.random() * Math.min(4_000, 250 * 2 ** attempt);

function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds * 1000, 10_000) : undefined;
}

export function openAiUpstream(options: OpenAiUpstreamOptions): Upstream {
  const doFetch = options.fetch ?? fetch;
  const sleep = options.sleep ?? ((ms: number) => Bun.sleep(ms));
  const endpoint = `${options.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  const egress = new URL(options.baseUrl).host;

  async function attempt(request: UpstreamRequest, signal: AbortSignal): Promise<PlanResult | RetryableFailure> {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "http-referer": "https://github.com/health-dev/health",
      "x-title": "health planner-v0",
    };
    if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
    const response = await doFetch(endpoint, {
      method: "POST",
      headers,
      signal,
      body: JSON.stringify({
        model: options.model,
        temperature: 0,
        response_format: { type: "json_object" },
        messages: [
          { role: "system", content: SYSTEM_PROMPT },
          {
            role: "user",
            content: JSON.stringify({
              request: request.prompt,
              intent: request.intent,
              workspace_manifest: request.manifest,
            }),
          },
        ],
      }),
    });
    if (response.status === 429 || response.status >= 500) {
      await response.body?.cancel();
      return new RetryableFailure(
        `upstream answered ${response.status}`,
        retryAfterMs(response.headers.get("retry-after")),
      );
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new UpstreamRejected(`upstream answered ${response.status}`);
    }
    const completion = v.safeParse(completionSchema, await response.json().catch(() => undefined));
    if (!completion.success) return new RetryableFailure("upstream reply is not a chat completion");
    const content = completion.output.choices[0]?.message.content ?? "";
    const draft = parseDraft(content);
    if (draft === undefined) return new RetryableFailure("upstream reply holds no valid plan");
    const model = completion.output.model ?? options.model;
    const provider = completion.output.provider ?? model.split("/")[0] ?? "unknown";
    return new PlanResult(draft, { egress, provider, model });
  }

  return {
    model: options.model,
    async plan(request) {
      const deadline = AbortSignal.timeout(options.timeoutMs);
      let last = "upstream failed";
      for (let i = 0; i <= options.retries; i++) {
        try {
          const outcome = await attempt(request, deadline);
          if (outcome instanceof PlanResult) return ok(outcome);
          last = outcome.detail;
          if (i < options.retries) await sleep(outcome.retryAfterMs ?? backoffMs(i));
        } catch (error) {
          if (deadline.aborted)
            return err({ kind: "timeout", detail: `upstream did not answer within ${options.timeoutMs} ms` });
          if (error instanceof UpstreamRejected) return err({ kind: "error", detail: error.message });
          last = "upstream unreachable";
          if (i < options.retries) await sleep(backoffMs(i));
        }
        if (deadline.aborted)
          return err({ kind: "timeout", detail: `upstream did not answer within ${options.timeoutMs} ms` });
      }
      return err({ kind: "error", detail: `${last} after ${options.retries + 1} attempts` });
    },
  };
}

class UpstreamRejected extends Error {}
