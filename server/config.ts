/**
 * Configuration from the environment (docs/interface.md §11), validated once at start with
 * one clear message per bad value.
 */
import * as v from "valibot";
import { flattenIssues } from "../schema/issues.ts";

const integer = (name: string, min: number, max: number, fallback: number) =>
  v.pipe(
    v.optional(v.string(), String(fallback)),
    v.regex(/^\d+$/, `${name} must be a whole number`),
    v.transform(Number),
    v.minValue(min, `${name} must be at least ${min}`),
    v.maxValue(max, `${name} must be at most ${max}`),
  );

/** Like `integer`, without a default: unset stays undefined. */
const optionalInteger = (name: string, min: number, max: number) =>
  v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d+$/, `${name} must be a whole number`),
      v.transform(Number),
      v.minValue(min, `${name} must be at least ${min}`),
      v.maxValue(max, `${name} must be at most ${max}`),
    ),
  );

const url = (name: string) =>
  v.optional(
    v.pipe(
      v.string(),
      v.url(`${name} must be an absolute URL`),
      v.check((s) => /^https?:\/\//.test(s), `${name} must use http or https`),
    ),
  );

/** A PostgreSQL URL (server/db-postgres.ts opens it); anything else is an SQLite file. */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

/** What Bun's client accepts: redis:// or rediss:// (TLS), valkey spellings, +tls and +unix forms. */
const REDIS_URL = /^(redis|rediss|valkey|valkeys)(\+tls)?(\+unix)?:\/\//;

export const configSchema = v.pipe(
  v.object({
    PORT: integer("PORT", 0, 65535, 3000),
    HOST: v.optional(v.pipe(v.string(), v.nonEmpty("HOST must not be empty")), "127.0.0.1"),
    HEALTH_DATABASE_URL: v.optional(
      v.pipe(
        v.string(),
        v.nonEmpty(),
        // Any other scheme would be taken for a file path and silently create a local database.
        v.check(
          (s) => s.startsWith("file:") || isPostgresUrl(s) || !/^[a-z][a-z0-9+.-]*:\/\//i.test(s),
          "HEALTH_DATABASE_URL must be an SQLite file (file:path or :memory:) or PostgreSQL (postgres://user:password@host:5432/database)",
        ),
        v.check(
          (s) => !isPostgresUrl(s) || URL.canParse(s),
          "HEALTH_DATABASE_URL is not a valid postgres:// URL (percent-encode reserved characters in the user name and password)",
        ),
      ),
      "file:.health/health.db",
    ),
    HEALTH_SYSTEM_KEY: v.optional(
      v.pipe(v.string(), v.minLength(24, "HEALTH_SYSTEM_KEY must be at least 24 characters")),
    ),
    HEALTH_UPSTREAM_URL: url("HEALTH_UPSTREAM_URL"),
    HEALTH_UPSTREAM_API_KEY: v.optional(v.string()),
    HEALTH_UPSTREAM_MODEL: v.optional(v.pipe(v.string(), v.nonEmpty()), "openrouter/auto"),
    HEALTH_UPSTREAM_TIMEOUT_MS: integer("HEALTH_UPSTREAM_TIMEOUT_MS", 100, 300_000, 20_000),
    HEALTH_UPSTREAM_RETRIES: integer("HEALTH_UPSTREAM_RETRIES", 0, 5, 2),
    HEALTH_CACHE_TTL_SECONDS: integer("HEALTH_CACHE_TTL_SECONDS", 0, 86_400, 300),
    HEALTH_ADMIN_EMAIL: v.optional(v.pipe(v.string(), v.email("HEALTH_ADMIN_EMAIL must be an email address"))),
    HEALTH_ADMIN_PASSWORD: v.optional(
      v.pipe(v.string(), v.minLength(12, "HEALTH_ADMIN_PASSWORD must be at least 12 characters")),
    ),
    HEALTH_LOOPS_DIR: v.optional(v.pipe(v.string(), v.nonEmpty()), "loops"),
    HEALTH_LOOP_THREADS: optionalInteger("HEALTH_LOOP_THREADS", 1, 64),
    HEALTH_LOOP_CONCURRENCY: integer("HEALTH_LOOP_CONCURRENCY", 1, 100_000, 1_000),
    HEALTH_LOOP_ORG_CONCURRENCY: integer("HEALTH_LOOP_ORG_CONCURRENCY", 1, 100_000, 250),
    HEALTH_LOOP_BLOCKED_MS: integer("HEALTH_LOOP_BLOCKED_MS", 1_000, 600_000, 10_000),
    HEALTH_RATE_LIMIT_PER_MINUTE: integer("HEALTH_RATE_LIMIT_PER_MINUTE", 1, 1_000_000, 20),
    HEALTH_RATE_LIMIT_PER_DAY: integer("HEALTH_RATE_LIMIT_PER_DAY", 1, 100_000_000, 200),
    HEALTH_REDIS_URL: v.optional(
      v.pipe(
        v.string(),
        v.check((s) => REDIS_URL.test(s) && URL.canParse(s), "HEALTH_REDIS_URL must be a redis:// or rediss:// URL"),
      ),
    ),
    HEALTH_REDIS_TIMEOUT_MS: integer("HEALTH_REDIS_TIMEOUT_MS", 50, 60_000, 1_000),
    HEALTH_AUDIT_RETENTION_DAYS: integer("HEALTH_AUDIT_RETENTION_DAYS", 1, 3_650, 90),
    HEALTH_RUN_RETENTION_DAYS: integer("HEALTH_RUN_RETENTION_DAYS", 1, 3_650, 30),
    HEALTH_USAGE_RETENTION_DAYS: integer("HEALTH_USAGE_RETENTION_DAYS", 1, 3_650, 400),
    // OpenTelemetry's own variables (server/services/tracing.ts): set, traces are on.
    OTEL_EXPORTER_OTLP_ENDPOINT: url("OTEL_EXPORTER_OTLP_ENDPOINT"),
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
    OTEL_SERVICE_NAME: v.optional(v.pipe(v.string(), v.nonEmpty()), "health"),
  }),
  v.check(
    (c) => (c.HEALTH_ADMIN_EMAIL === undefined) === (c.HEALTH_ADMIN_PASSWORD === undefined),
    "HEALTH_ADMIN_EMAIL and HEALTH_ADMIN_PASSWORD must be set together",
  ),
);

export type Config = v.InferOutput<typeof configSchema>;

export type ConfigResult = { ok: true; config: Config } | { ok: false; problems: string[] };

/** Empty variables count as unset, as in most twelve-factor tools. */
export function loadConfig(env: Record<string, string | undefined>): ConfigResult {
  const present: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined && value !== "") present[key] = value;
  const parsed = v.safeParse(configSchema, present);
  if (parsed.success) return { ok: true, config: parsed.output };
  return { ok: false, problems: flattenIssues(parsed.issues).map((i) => i.message) };
}
