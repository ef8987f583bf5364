/**
 * The enumerations of runs, steps and attempts, once: the tables (tables.ts), the wire and admin
 * schemas, the CLI and the console all take them from here. No imports, so the console's bundle
 * can use it as is.
 */
export const RUN_STATUSES = ["queued", "running", "sleeping", "complete", "errored", "terminated"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** A run in one of these will not change again. */
export const FINISHED_RUN_STATUSES = ["complete", "errored", "terminated"] as const satisfies readonly RunStatus[];

/** `terminated`: the run was terminated while the step was open (a sleep, or an attempt). */
export const STEP_STATUSES = ["running", "sleeping", "complete", "errored", "terminated"] as const;
export const STEP_KINDS = ["do", "sleep"] as const;
export const ATTEMPT_STATUSES = ["running", "complete", "errored", "terminated"] as const;
/** Who started a run: an API token over HTTP, or a signed-in user from the console or CLI. */
export const TRIGGER_KINDS = ["token", "user"] as const;

export const isFinishedRunStatus = (status: string): boolean =>
  (FINISHED_RUN_STATUSES as readonly string[]).includes(status);
