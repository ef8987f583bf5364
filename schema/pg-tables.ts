/**
 * The same tables as tables.ts, for PostgreSQL (drizzle's pg-core). tables.ts documents each
 * table and column; this file only says how PostgreSQL stores them.
 *
 * Why a second file rather than one definition for both dialects: drizzle builds tables from
 * dialect-specific column builders (`sqliteTable`/`integer` against `pgTable`/`bigint`), with no
 * dialect-neutral layer, and drizzle-kit reads each dialect's tables from its own schema file. A
 * factory generic over both would lose the inferred row types every store relies on, or need casts
 * in every table. So each file is plain drizzle, and test/schema-dialects.test.ts compares them
 * (tables, columns, types, nullability, defaults, keys, indexes, foreign keys) and fails on any
 * difference, and checks at compile time that both infer the same row types.
 *
 * Mapping: text stays text (JSON too: the stores already write it as text, and drizzle's bun-sql
 * driver has open issues with jsonb); an integer that holds epoch milliseconds (every `…At`
 * column) is `bigint` read as a JavaScript number (safe until the year 287396); counts, statuses
 * and the like are `integer`. Column names are the same camelCase names, quoted by drizzle.
 */
import { sql } from "drizzle-orm";
import { bigint, index, integer, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import { ATTEMPT_STATUSES, RUN_STATUSES, STEP_KINDS, STEP_STATUSES, TRIGGER_KINDS } from "./statuses.ts";

/** Epoch milliseconds. */
const ms = () => bigint({ mode: "number" });

export const organizations = pgTable("organizations", {
  id: text().primaryKey(),
  slug: text().notNull().unique(),
  name: text().notNull(),
  createdAt: ms().notNull(),
});

export const settings = pgTable("settings", {
  key: text().primaryKey(),
  value: text().notNull(),
  updatedAt: ms().notNull(),
});

export const users = pgTable("users", {
  id: text().primaryKey(),
  email: text().notNull().unique(),
  passwordHash: text().notNull(),
  createdAt: ms().notNull(),
});

export const memberships = pgTable(
  "memberships",
  {
    userId: text()
      .notNull()
      .references(() => users.id),
    orgId: text()
      .notNull()
      .references(() => organizations.id),
    role: text({ enum: ["owner", "admin", "member"] }).notNull(),
    createdAt: ms().notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.orgId] })],
);

export const sessions = pgTable("sessions", {
  id: text().primaryKey(),
  hash: text().notNull().unique(),
  userId: text()
    .notNull()
    .references(() => users.id),
  orgId: text()
    .notNull()
    .references(() => organizations.id),
  createdAt: ms().notNull(),
  expiresAt: ms().notNull(),
});

export const apiTokens = pgTable(
  "api_tokens",
  {
    id: text().primaryKey(),
    orgId: text()
      .notNull()
      .references(() => organizations.id),
    name: text().notNull(),
    prefix: text().notNull(),
    lastFour: text().notNull(),
    hash: text().notNull(),
    scopes: text().notNull(),
    createdBy: text().notNull(),
    createdAt: ms().notNull(),
    lastUsedAt: ms(),
    revokedAt: ms(),
    revokedBy: text(),
  },
  (t) => [uniqueIndex("api_tokens_hash").on(t.hash), index("api_tokens_org").on(t.orgId)],
);

export const adminAudit = pgTable(
  "admin_audit",
  {
    // SQLite's INTEGER PRIMARY KEY AUTOINCREMENT. "By default", not "always": rows copied over from
    // an SQLite file keep their ids.
    id: bigint({ mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    orgId: text().notNull(),
    actorKind: text({ enum: ["user", "token", "system"] }).notNull(),
    actorId: text().notNull(),
    action: text().notNull(),
    targetId: text(),
    at: ms().notNull(),
  },
  (t) => [index("admin_audit_org_at").on(t.orgId, t.at)],
);

/** As in schema/tables.ts: no secondary index. */
export const planAudit = pgTable("plan_audit", {
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
  createdAt: ms().notNull(),
});

export const rateLimitDays = pgTable(
  "rate_limit_days",
  {
    company: text().notNull(),
    day: text().notNull(),
    count: integer().notNull(),
  },
  (t) => [primaryKey({ columns: [t.company, t.day] })],
);

export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    scope: text().notNull(),
    key: text().notNull(),
    requestHash: text().notNull(),
    status: text({ enum: ["in_flight", "done"] }).notNull(),
    responseStatus: integer(),
    responseBody: text(),
    responseHeaders: text(),
    createdAt: ms().notNull(),
    expiresAt: ms().notNull(),
  },
  (t) => [primaryKey({ columns: [t.scope, t.key] }), index("idempotency_expires").on(t.expiresAt)],
);

export const runs = pgTable(
  "runs",
  {
    id: text().primaryKey(),
    workflowInstanceId: text().notNull().unique(),
    orgId: text().notNull(),
    loopId: text().notNull(),
    input: text(),
    triggerKind: text({ enum: TRIGGER_KINDS }).notNull(),
    triggerId: text().notNull(),
    triggerName: text().notNull(),
    traceparent: text(),
    status: text({ enum: RUN_STATUSES }).notNull(),
    output: text(),
    error: text(),
    attempts: integer().notNull().default(0),
    leaseOwner: text(),
    leaseExpiresAt: ms(),
    wakeAt: ms(),
    createdAt: ms().notNull(),
    updatedAt: ms().notNull(),
    startedAt: ms(),
    finishedAt: ms(),
  },
  (t) => [
    index("runs_org_loop_created").on(t.orgId, t.loopId, t.createdAt),
    index("runs_status_wake").on(t.status, t.wakeAt),
    index("runs_status_org_loop").on(t.status, t.orgId, t.loopId, t.wakeAt),
    index("runs_queued").on(t.orgId, t.loopId, t.createdAt).where(sql`${t.status} = 'queued'`),
    index("runs_finished_at").on(t.finishedAt).where(sql`${t.finishedAt} IS NOT NULL`),
  ],
);

export const loopEngines = pgTable("loop_engines", {
  owner: text().primaryKey(),
  host: text().notNull(),
  pid: integer().notNull(),
  startedAt: ms().notNull(),
  seenAt: ms().notNull(),
});

export const runSteps = pgTable(
  "run_steps",
  {
    runId: text()
      .notNull()
      .references(() => runs.id),
    key: text().notNull(),
    name: text().notNull(),
    idx: integer().notNull(),
    kind: text({ enum: STEP_KINDS }).notNull(),
    status: text({ enum: STEP_STATUSES }).notNull(),
    result: text(),
    error: text(),
    attempts: integer().notNull().default(0),
    wakeAt: ms(),
    startedAt: ms().notNull(),
    finishedAt: ms(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.key] })],
);

export const runStepAttempts = pgTable(
  "run_step_attempts",
  {
    runId: text()
      .notNull()
      .references(() => runs.id),
    key: text().notNull(),
    attempt: integer().notNull(),
    status: text({ enum: ATTEMPT_STATUSES }).notNull(),
    error: text(),
    startedAt: ms().notNull(),
    finishedAt: ms(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.key, t.attempt] })],
);

export const deviceLogins = pgTable(
  "device_logins",
  {
    id: text().primaryKey(),
    deviceCodeHash: text().notNull(),
    userCode: text().notNull(),
    status: text({ enum: ["pending", "approved", "denied", "consumed"] }).notNull(),
    clientName: text().notNull(),
    userId: text().references(() => users.id),
    orgId: text().references(() => organizations.id),
    createdAt: ms().notNull(),
    expiresAt: ms().notNull(),
    approvedAt: ms(),
    lastPolledAt: ms(),
  },
  (t) => [
    uniqueIndex("device_logins_device_code_hash").on(t.deviceCodeHash),
    uniqueIndex("device_logins_user_code").on(t.userCode),
    index("device_logins_expires").on(t.expiresAt),
  ],
);

export const usageMinutes = pgTable(
  "usage_minutes",
  {
    /** Minutes since the epoch: an integer until the year 6053. */
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
