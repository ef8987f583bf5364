/**
 * The builder's local record of `health code`, under `.health/code/` in the current directory
 * (the workspace): one JSON file per session, an append-only audit log with no prompt text, and
 * one file per executed step.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import * as v from "valibot";
import { isIntent } from "../../core/intents.ts";
import { CliError } from "../errors.ts";
import type { Turn } from "./turn.ts";

export const codeDir = (cwd = process.cwd()): string => join(cwd, ".health", "code");
export const sessionsDir = (cwd?: string): string => join(codeDir(cwd), "sessions");
export const runsDir = (cwd?: string): string => join(codeDir(cwd), "runs");
export const auditPath = (cwd?: string): string => join(codeDir(cwd), "audit.jsonl");
export const sessionPath = (sessionId: string, cwd?: string): string => join(sessionsDir(cwd), `${sessionId}.json`);

export type Mode = "offline" | "hosted";

/** One line of audit.jsonl. Deliberately no prompt and no plan text: counts and ids only. */
export interface AuditRow {
  time: string;
  session_id: string;
  turn_id: string;
  mode: Mode;
  intent: string;
  steps: number;
  audit_id: string | null;
}

const stepSchema = v.object({
  step: v.pipe(v.number(), v.integer(), v.minValue(1)),
  kind: v.string(),
  command: v.string(),
  purpose: v.string(),
  requires_auth: v.boolean(),
  blocked_reason: v.nullable(v.string()),
});

const turnSummarySchema = v.object({
  turn_id: v.string(),
  time: v.string(),
  mode: v.picklist(["offline", "hosted"]),
  intent: v.string(),
  steps: v.number(),
  audit_id: v.nullable(v.string()),
});

const savedSessionSchema = v.object({
  version: v.literal(1),
  session_id: v.pipe(v.string(), v.uuid()),
  created_at: v.string(),
  updated_at: v.string(),
  turn_id: v.string(),
  intent: v.pipe(v.string(), v.check(isIntent, "unknown intent")),
  redacted_prompt: v.string(),
  assistant_message: v.string(),
  hosted: v.boolean(),
  audit_id: v.nullable(v.string()),
  tool_plan: v.array(stepSchema),
  turns: v.array(turnSummarySchema),
  /**
   * Where the plan's `health init` step put the workspace, relative to the directory that holds
   * this session (`.` when it scaffolded in place); later steps run there. Absent until it ran.
   */
  workspace_dir: v.optional(v.string()),
});

/**
 * A saved session: its latest turn (the plan `--exec` runs, steps numbered as shown) and a
 * summary of every turn.
 */
export type SavedSession = v.InferOutput<typeof savedSessionSchema>;
export type TurnSummary = v.InferOutput<typeof turnSummarySchema>;

function ensureDir(dir: string): void {
  mkdirSync(dir, { recursive: true });
}

function writeAtomically(path: string, text: string): void {
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, text);
  renameSync(temp, path);
}

export function auditRow(turn: Turn, time = new Date()): AuditRow {
  return {
    time: time.toISOString(),
    session_id: turn.session_id,
    turn_id: turn.turn_id,
    mode: turn.hosted ? "hosted" : "offline",
    intent: turn.intent,
    steps: turn.tool_plan.length,
    audit_id: turn.audit_id ?? null,
  };
}

export function appendAudit(row: AuditRow, cwd?: string): void {
  ensureDir(codeDir(cwd));
  appendFileSync(auditPath(cwd), `${JSON.stringify(row)}\n`);
}

/** Saves `turn` as the session's latest turn, keeping the summaries of the earlier ones. */
export function saveTurn(turn: Turn, previous: SavedSession | undefined, cwd?: string): SavedSession {
  const now = new Date().toISOString();
  const row = auditRow(turn);
  const summary: TurnSummary = {
    turn_id: row.turn_id,
    time: row.time,
    mode: row.mode,
    intent: row.intent,
    steps: row.steps,
    audit_id: row.audit_id,
  };
  const session: SavedSession = {
    version: 1,
    session_id: turn.session_id,
    created_at: previous?.created_at ?? now,
    updated_at: now,
    turn_id: turn.turn_id,
    intent: turn.intent,
    redacted_prompt: turn.redacted_prompt,
    assistant_message: turn.assistant_message,
    hosted: turn.hosted,
    audit_id: turn.audit_id ?? null,
    tool_plan: turn.tool_plan,
    turns: [...(previous?.turns ?? []), summary],
    // A new plan that scaffolds its own workspace starts over; otherwise it works where the last one did.
    ...(previous?.workspace_dir !== undefined && !turn.tool_plan.some((step) => /^health\s+init\s/.test(step.command))
      ? { workspace_dir: previous.workspace_dir }
      : {}),
  };
  ensureDir(sessionsDir(cwd));
  writeAtomically(sessionPath(turn.session_id, cwd), `${JSON.stringify(session, null, 2)}\n`);
  return session;
}

/**
 * The directory whose `.health/code/sessions/` holds `sessionId`: `from` or the nearest parent
 * that has it, so a step can be run from inside the workspace the plan created, too.
 */
export function locateSession(sessionId: string, from = process.cwd()): string {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    if (existsSync(sessionPath(sessionId, dir))) return dir;
    if (dirname(dir) === dir) break;
  }
  throw new CliError(`No saved session ${sessionId} in ${sessionsDir(from)} or the directories above it`, {
    hint: 'Sessions are saved in the directory where health code ran; plan one with health code --prompt "…"',
  });
}

/** Records where the plan's workspace is, so the next steps run in it. */
export function saveWorkspaceDir(session: SavedSession, workspaceDir: string, cwd: string): SavedSession {
  const updated = { ...session, workspace_dir: workspaceDir };
  writeAtomically(sessionPath(session.session_id, cwd), `${JSON.stringify(updated, null, 2)}\n`);
  return updated;
}

/** The saved session, or a clear error: missing, unreadable, or not in the expected shape. */
export function loadSession(sessionId: string, cwd?: string): SavedSession {
  const path = sessionPath(sessionId, cwd);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      throw new CliError(`No saved session ${sessionId} in ${sessionsDir(cwd)}`, {
        hint: 'Sessions are saved in the directory where health code ran; plan one with health code --prompt "…"',
      });
    }
    throw new CliError(`The saved session ${path} is not readable JSON`);
  }
  const parsed = v.safeParse(savedSessionSchema, raw);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const where = issue?.path?.map((p) => String(p.key)).join(".") ?? "";
    throw new CliError(
      `The saved session ${path} is damaged${where ? ` at ${where}` : ""}: ${issue?.message ?? "invalid"}`,
    );
  }
  return parsed.output;
}

export type SavedStep = SavedSession["tool_plan"][number];

/** What `--exec` writes for every attempt, run or refused. */
export interface RunRecord {
  run_id: string;
  session_id: string;
  step: number;
  command: string;
  argv: string[] | null;
  blocked_reason: string | null;
  exit_code: number | null;
  /** Set when the step was stopped for running past its timeout. */
  timed_out: boolean;
  stdout: string;
  stderr: string;
  started_at: string;
  finished_at: string;
}

export function writeRun(record: RunRecord, cwd?: string): string {
  ensureDir(runsDir(cwd));
  const path = join(runsDir(cwd), `run-${record.run_id}.json`);
  writeAtomically(path, `${JSON.stringify(record, null, 2)}\n`);
  return path;
}
