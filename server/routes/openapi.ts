/**
 * The OpenAPI 3.1 document of the HTTP API, served at /openapi.json. Body schemas are derived
 * from the valibot wire schemas, so the document cannot drift from what the server validates.
 */
import { toJsonSchema } from "@valibot/to-json-schema";
import type * as v from "valibot";
import {
  accountResponseSchema,
  planningRequestSchema,
  planningResponseSchema,
  problemSchema,
  triggerResponseSchema,
} from "../../schema/wire.ts";
import { RUN_ID_PATTERN } from "../../schema/ids.ts";
import { runRecordSchema } from "../../schema/runs.ts";
import { RUN_STATUSES } from "../../schema/statuses.ts";
import { SERVER_VERSION } from "../version.ts";

type AnySchema = v.GenericSchema;

// Pipes with checks or transforms have no JSON Schema twin; describe their type and move on.
const json = (schema: AnySchema) => toJsonSchema(schema, { errorMode: "ignore", target: "openapi-3.0" });

const problem = (description: string) => ({
  description,
  content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
});

const commonErrors = {
  "400": problem("Malformed JSON or an invalid field (`invalid_request`, with `errors`)"),
  "401": problem("No bearer, or an unknown, malformed or revoked token (`unauthorized`)"),
  "403": problem("Valid token, wrong organization or scope (`forbidden`)"),
};

let cached: unknown;

export function openApiDocument(): unknown {
  cached ??= {
    openapi: "3.1.0",
    info: {
      title: "health",
      version: SERVER_VERSION,
      description:
        "Plans and runs agent loops for builders in healthcare. Developer infrastructure only: no clinical advice.",
    },
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: {
        PlanningRequest: json(planningRequestSchema),
        PlanningResponse: json(planningResponseSchema),
        Account: json(accountResponseSchema),
        Problem: json(problemSchema),
        TriggerResponse: json(triggerResponseSchema),
        Run: json(runRecordSchema),
      },
    },
    security: [{ bearer: [] }],
    paths: {
      "/cli/code/sessions": {
        post: {
          summary: "Plan: a short message and a sanitized tool plan of `health` commands",
          parameters: [
            {
              name: "X-Service-Company",
              in: "header",
              schema: { type: "string" },
              description: "Attribution (system key only)",
            },
            { name: "X-Service-CLI-Version", in: "header", schema: { type: "string" } },
            { name: "Idempotency-Key", in: "header", schema: { type: "string", maxLength: 255 } },
          ],
          requestBody: {
            required: true,
            content: { "application/json": { schema: { $ref: "#/components/schemas/PlanningRequest" } } },
          },
          responses: {
            "200": {
              description: "The plan (also for clinical_blocked prompts, with an empty plan)",
              headers: {
                "X-Health-Cache": { schema: { enum: ["hit", "miss", "bypass"] } },
                "Idempotent-Replayed": { schema: { type: "string" } },
                RateLimit: { schema: { type: "string" } },
                "RateLimit-Policy": { schema: { type: "string" } },
              },
              content: { "application/json": { schema: { $ref: "#/components/schemas/PlanningResponse" } } },
            },
            ...commonErrors,
            "409": problem("Idempotency-Key reused with another body, or still in flight"),
            "413": problem("Body over 64 KiB"),
            "415": problem("Body is not application/json"),
            "429": problem("Rate limit exceeded; see Retry-After"),
            "502": problem("Upstream failed after retries"),
            "503": problem("Shared state (Redis) unreachable: not rate-limited or replay-safe; see Retry-After"),
            "504": problem("Upstream timed out"),
          },
        },
      },
      "/loop/{org_id}/{loop_id}": {
        post: {
          summary: "Start a run of a loop; the JSON body becomes event.body (no body: undefined)",
          description:
            "Bearer: an API token of the organization with scope `loop:run` or `loop:run:<loop_id>`. The run is committed before the 202.",
          parameters: [
            { name: "org_id", in: "path", required: true, schema: { type: "string" } },
            { name: "loop_id", in: "path", required: true, schema: { type: "string", pattern: "^loop_" } },
            { name: "Idempotency-Key", in: "header", schema: { type: "string", maxLength: 255 } },
          ],
          requestBody: { required: false, content: { "application/json": { schema: {} } } },
          responses: {
            "202": {
              description: "The run is queued durably",
              content: { "application/json": { schema: { $ref: "#/components/schemas/TriggerResponse" } } },
            },
            ...commonErrors,
            "404": problem("No such loop in the token's organization"),
            "409": problem("Idempotency-Key reused with another body, or still in flight"),
            "413": problem("Body over 1 MiB"),
            "415": problem("Body is not application/json"),
          },
        },
      },
      "/loop/{org_id}/{loop_id}/runs/{run_id}": {
        get: {
          summary:
            "A run: { id, workflowInstanceId, loopId, status, input, output, error, steps, createdAt, updatedAt, … }",
          parameters: [
            { name: "org_id", in: "path", required: true, schema: { type: "string" } },
            { name: "loop_id", in: "path", required: true, schema: { type: "string" } },
            { name: "run_id", in: "path", required: true, schema: { type: "string", pattern: RUN_ID_PATTERN.source } },
          ],
          responses: {
            "200": {
              description: `The run, its steps and each step's attempts; status is one of ${RUN_STATUSES.join(", ")}`,
              content: { "application/json": { schema: { $ref: "#/components/schemas/Run" } } },
            },
            ...commonErrors,
            "404": problem("No such run of this loop in the token's organization"),
          },
        },
      },
      "/cli/account": {
        get: {
          summary: "The caller's company, token, scopes, versions and remaining rate-limit budget",
          responses: {
            "200": {
              description: "Account",
              content: { "application/json": { schema: { $ref: "#/components/schemas/Account" } } },
            },
            "401": commonErrors["401"],
            "403": commonErrors["403"],
            "503": problem("Shared state (Redis) unreachable; see Retry-After"),
          },
        },
      },
    },
  };
  return cached;
}
