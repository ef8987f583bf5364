/**
 * Every table of the gateway, in one file so drizzle-kit sees the whole database.
 * Times are integer milliseconds since the epoch; JSON columns are text holding JSON.
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { ATTEMPT_STATUSES, RUN_STATUSES, STEP_KINDS, STEP_STATUSES, TRIGGER_KINDS } from "./statuses.ts";

export const organizations = sqliteTable("organizations", {
  id: text().primaryKey(),
  slug: text().notNull().unique(),
  name: text().notNull(),
  createdAt: integer().notNull(),
});

/** Key/value settings of the installation: the system key hash, the one-time setup code hash. */
export const settings = sqliteTable("settings", {
  key: text().primaryKey(),
  value: text().notNull(),
  updatedAt: integer().notNull(),
});

export const users = sqliteTable("users", {
  id: text().primaryKey(),
  email: text().notNull().unique(),
  passwordHash: text().notNull(),
  createdAt: integer().notNull(),
});

export const memberships = sqliteTable(
  "memberships",
  {
    userId: text()
      .notNull()
      .references(() => users.id),
    orgId: text()
      .notNull()
      .references(() => organizations.id),
    role: text({ enum: ["owner", "admin", "member"] }).notNull(),
    createdAt: integer().notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.orgId] })],
);

/** Signed-in admin sessions; only the SHA-256 of the session secret is stored. */
export const sessions = sqliteTable("sessions", {
  id: text().primaryKey(),
  hash: text().notNull().unique(),
  userId: text()
    .notNull()
    .references(() => users.id),
  orgId: text()
    .notNull()
    .references(() => organizations.id),
  createdAt: integer().notNull(),
  expiresAt: integer().notNull(),
});

export const apiTokens = sqliteTable(
  "api_tokens",
  {
    id: text().primaryKey(),
    orgId: text()
      .notNull()
      .references(() => organizations.id),
    name: text().notNull(),
    prefix: text().notNull(),
    lastFour: text().notNull(),
    /** Hex SHA-256 of the full token string. The token itself is never stored. */
    hash: text().notNull(),
    /** JSON array of scope strings. */
    scopes: text().notNull(),
    createdBy: text().notNull(),
    createdAt: integer().notNull(),
    lastUsedAt: integer(),
    revokedAt: integer(),
    revokedBy: text(),
  },
  (t) => [uniqueIndex("api_tokens_hash").on(t.hash), index("api_tokens_org").on(t.orgId)],
);

/** Who did what to tokens, users and runs, for audit. */
export const adminAudit = sqliteTable(
  "admin_audit",
  {
    id: integer().primaryKey({ autoIncrement: true }),
    orgId: text().notNull(),
    actorKind: text({ enum: ["user", "token", "system"] }).notNull(),
    actorId: text().notNull(),
    action: text().notNull(),
    targetId: text(),
    at: integer().notNull(),
  },
  (t) => [index("admin_audit_org_at").on(t.orgId, t.at)],
);

/**
 * One row per planning call. Never holds prompt text or patient context. No secondary index:
 * nothing reads audit rows by company, and every index is one more B-tree each answered call
 * writes (retention finds the oldest rows by insert order).
 */
export const planAudit = sqliteTable("plan_audit", {
  auditId: text().primaryKey(),
  requestId: text().notNull(),
  company: text().notNull(),
  principalKind: text({ enum: ["system", "token"] }).notNull(),
  principalId: text().notNull(),
  intent: text().notNull(),
  cache: text({ enum: ["hit", "miss", "bypass"] }).notNull(),
  upstreamLatencyMs: integer(),
  blockedSteps: integer().notNull(),
  status: integer().notNull(),
  createdAt: integer().notNull(),
});

/** Daily rate-limit counters, persisted so a restart does not reset the day. */
export const rateLimitDays = sqliteTable(
  "rate_limit_days",
  {
    company: text().notNull(),
    day: text().notNull(),
    count: integer().notNull(),
  },
  (t) => [primaryKey({ columns: [t.company, t.day] })],
);

/** Idempotency-Key records; `status` is `in_flight` until the response is stored. */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    scope: text().notNull(),
    key: text().notNull(),
    requestHash: text().notNull(),
    status: text({ enum: ["in_flight", "done"] }).notNull(),
    responseStatus: integer(),
    /** JSON of the stored response body. */
    responseBody: text(),
    /** JSON object of response headers worth replaying (e.g. X-Health-Cache). */
    responseHeaders: text(),
    createdAt: integer().notNull(),
    expiresAt: integer().notNull(),
  },
  (t) => [primaryKey({ columns: [t.scope, t.key] }), index("idempotency_expires").on(t.expiresAt)],
);

export const runs = sqliteTable(
  "runs",
  {
    id: text().primaryKey(),
    workflowInstanceId: text().notNull().unique(),
    orgId: text().notNull(),
    loopId: text().notNull(),
    /** JSON of event.body; NULL when the trigger sent no body (event.body === undefined). */
    input: text(),
    triggerKind: text({ enum: TRIGGER_KINDS }).notNull(),
    triggerId: text().notNull(),
    triggerName: text().notNull(),
    /** The W3C traceparent of the trigger request's span, when tracing is on: the run's spans join its trace. */
    traceparent: text(),
    status: text({ enum: RUN_STATUSES }).notNull(),
    output: text(),
    /** JSON `{ name, message }` when the run errored or was terminated. */
    error: text(),
    attempts: integer().notNull().default(0),
    leaseOwner: text(),
    leaseExpiresAt: integer(),
    /** When a sleeping run is due to wake. */
    wakeAt: integer(),
    createdAt: integer().notNull(),
    updatedAt: integer().notNull(),
    startedAt: integer(),
    finishedAt: integer(),
  },
  (t) => [
    index("runs_org_loop_created").on(t.orgId, t.loopId, t.createdAt),
    index("runs_status_wake").on(t.status, t.wakeAt),
    // The fair claim: ready runs per organization and loop, queued ones in arrival (rowid) order.
    index("runs_status_org_loop").on(t.status, t.orgId, t.loopId, t.wakeAt),
    // The queued runs of one organization and loop in order of arrival (createdAt, then rowid on
    // SQLite and id on PostgreSQL), and only those: a claim reads the oldest from here, never
    // stepping over the finished runs a (orgId, loopId, createdAt) index also holds.
    index("runs_queued").on(t.orgId, t.loopId, t.createdAt).where(sql`${t.status} = 'queued'`),
    // Retention: finished runs by when they finished (unfinished rows stay out of the index).
    index("runs_finished_at").on(t.finishedAt).where(sql`${t.finishedAt} IS NOT NULL`),
  ],
);

/**
 * Loop engines alive on this database, one row per process: a claim pass makes the runs of an
 * engine whose row went stale (or whose process is gone) claimable without waiting for leases.
 */
export const loopEngines = sqliteTable("loop_engines", {
  owner: text().primaryKey(),
  host: text().notNull(),
  pid: integer().notNull(),
  startedAt: integer().notNull(),
  seenAt: integer().notNull(),
});

export const runSteps = sqliteTable(
  "run_steps",
  {
    runId: text()
      .notNull()
      .references(() => runs.id),
    /** Step name made unique within the run (`fetch`, `fetch#2`, …). */
    key: text().notNull(),
    name: text().notNull(),
    idx: integer().notNull(),
    kind: text({ enum: STEP_KINDS }).notNull(),
    /** `terminated`: the run was terminated while this step was open (a sleep, or an attempt). */
    status: text({ enum: STEP_STATUSES }).notNull(),
    result: text(),
    error: text(),
    attempts: integer().notNull().default(0),
    wakeAt: integer(),
    startedAt: integer().notNull(),
    finishedAt: integer(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.key] })],
);

/** Every attempt of a `step.do`, so a retried step keeps the error of each failed try. */
export const runStepAttempts = sqliteTable(
  "run_step_attempts",
  {
    runId: text()
      .notNull()
      .references(() => runs.id),
    key: text().notNull(),
    /** 1 for the first try. */
    attempt: integer().notNull(),
    status: text({ enum: ATTEMPT_STATUSES }).notNull(),
    /** JSON `{ name, message }` when the attempt failed or was cut short. */
    error: text(),
    startedAt: integer().notNull(),
    finishedAt: integer(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.key, t.attempt] })],
);

/**
 * Device-link sign-ins (RFC 8628, adapted to admin sessions): the CLI polls with a device code,
 * an admin approves the short user code in the console, and the next poll gets a new session.
 * Only the SHA-256 of the device code is stored; the session is created when it is collected.
 */
export const deviceLogins = sqliteTable(
  "device_logins",
  {
    id: text().primaryKey(),
    /** Hex SHA-256 of the device code the CLI polls with. The code itself is never stored. */
    deviceCodeHash: text().notNull(),
    /** 8 characters of the user-code alphabet, without the dash shown to people. */
    userCode: text().notNull(),
    status: text({ enum: ["pending", "approved", "denied", "consumed"] }).notNull(),
    /** What the CLI says it is (e.g. `health CLI on build-01`), shown to the approving admin. */
    clientName: text().notNull(),
    /** The admin who approved or denied, and the organization the new session belongs to. */
    userId: text().references(() => users.id),
    orgId: text().references(() => organizations.id),
    createdAt: integer().notNull(),
    expiresAt: integer().notNull(),
    /** When an admin approved or denied. */
    approvedAt: integer(),
    lastPolledAt: integer(),
  },
  (t) => [
    uniqueIndex("device_logins_device_code_hash").on(t.deviceCodeHash),
    uniqueIndex("device_logins_user_code").on(t.userCode),
    index("device_logins_expires").on(t.expiresAt),
  ],
);

/**
 * Usage, one row per minute and (organization, company, token, loop): counts and latency
 * histograms that the Usage page, `usage.summary` and `health usage` read instead of the audit
 * and run rows, so a 30-day window reads at most one row per minute and series. Written by the
 * server's periodic flush, never on a request's path (server/services/usage.ts). Planning rows
 * have `loopId` ''; run rows have `company` ''; `tokenId` is '' for the system key and users.
 * Histograms are JSON arrays of counts over fixed bounds (see `USAGE_BOUNDS`).
 */
export const usageMinutes = sqliteTable(
  "usage_minutes",
  {
    /** Minutes since the epoch. */
    minute: integer().notNull(),
    orgId: text().notNull(),
    company: text().notNull(),
    tokenId: text().notNull(),
    loopId: text().notNull(),
    requests: integer().notNull().default(0),
    cacheHits: integer().notNull().default(0),
    cacheMisses: integer().notNull().default(0),
    clinicalBlocks: integer().notNull().default(0),
    rateLimited: integer().notNull().default(0),
    upstreamErrors: integer().notNull().default(0),
    upstreamTimeouts: integer().notNull().default(0),
    runsStarted: integer().notNull().default(0),
    runsCompleted: integer().notNull().default(0),
    runsErrored: integer().notNull().default(0),
    gatewayMs: text(),
    upstreamMs: text(),
    runMs: text(),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.minute, t.company, t.tokenId, t.loopId] }),
    index("usage_minutes_minute").on(t.minute),
  ],
);
