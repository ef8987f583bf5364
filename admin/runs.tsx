/**
 * Runs: the list, and one run's input (event.body), steps and output. A run that is not
 * finished is polled once a second: simple, and a run's steps rarely change faster than that.
 */
import { useEffect, useState } from "preact/hooks";
import { api, errorCode, errorMessage, type Run, type RunStatus, type RunStep, type RunSummary } from "./api.ts";
import { formatDuration, isFinished, prettyJson, runDuration, stepDuration } from "./format.ts";
import { RUN_STATUSES } from "../schema/statuses.ts";
import { Link, paths } from "./router.tsx";
import {
  ConfirmDialog,
  CopyButton,
  Failure,
  FilterSelect,
  JsonBlock,
  Loading,
  PageTitle,
  StatusBadge,
  Time,
  useResource,
} from "./ui.tsx";

const RUN_POLL_MS = 1000;
const LIST_POLL_MS = 2000;
const PAGE_SIZE = 25;
const STATUSES = RUN_STATUSES;

/** Re-renders every `intervalMs` while `active`, so running durations tick. */
function useNow(active: boolean, intervalMs: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [active, intervalMs]);
  return now;
}

function TriggerTag({ trigger }: { trigger: RunSummary["trigger"] }) {
  return (
    <span class="tag">
      <span class="tag-kind">{trigger.kind === "token" ? "token" : "user"}</span> {trigger.name}
    </span>
  );
}

export function RunTable({
  runs,
  showLoop = true,
  empty = "No runs yet.",
}: {
  runs: RunSummary[];
  showLoop?: boolean;
  /** What to say when there is no run to show. */
  empty?: string;
}) {
  const now = useNow(
    runs.some((run) => !isFinished(run.status)),
    1000,
  );
  if (runs.length === 0) return <p class="muted">{empty}</p>;
  return (
    <table class="stack runs">
      <caption class="visually-hidden">Runs, newest first</caption>
      <thead>
        <tr>
          <th scope="col">Run</th>
          <th scope="col">Status</th>
          {showLoop && <th scope="col">Loop</th>}
          <th scope="col">Started</th>
          <th scope="col">Duration</th>
          <th scope="col">Triggered by</th>
        </tr>
      </thead>
      <tbody>
        {runs.map((run) => (
          <tr key={run.id} data-run-id={run.id}>
            <td data-label="Run">
              <Link class="mono" href={paths.run(run.id)}>
                {run.id}
              </Link>
            </td>
            <td data-label="Status">
              <StatusBadge status={run.status} />
            </td>
            {showLoop && (
              <td data-label="Loop">
                <Link class="mono" href={paths.loop(run.loopId)}>
                  {run.loopId}
                </Link>
              </td>
            )}
            <td data-label="Started">
              <Time iso={run.startedAt ?? run.createdAt} />
            </td>
            <td data-label="Duration">{runDuration(run, now)}</td>
            <td data-label="Triggered by">
              <TriggerTag trigger={run.trigger} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

interface ListFilter {
  status: RunStatus | "";
  loopId: string;
}

/** The filters live in the URL (`?status=errored&loop=loop_intake`): a filtered list can be shared or reloaded. */
function filterFromUrl(): ListFilter {
  const params = new URLSearchParams(location.search);
  const status = params.get("status") ?? "";
  return {
    status: STATUSES.find((known) => known === status) ?? "",
    loopId: params.get("loop") ?? "",
  };
}

export function RunsPage() {
  const [filter, setFilter] = useState<ListFilter>(filterFromUrl);
  const loops = useResource(() => api.loops.list.query(), "loops");
  const [firstPage, setFirstPage] = useState<{ runs: RunSummary[]; nextCursor: string | null } | null>(null);
  // Pages past the first, loaded on demand; `cursor` undefined until "Load more" was used.
  const [more, setMore] = useState<{ runs: RunSummary[]; cursor: string | null } | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [generation, setGeneration] = useState(0);
  const query = {
    limit: PAGE_SIZE,
    ...(filter.status === "" ? {} : { status: filter.status }),
    ...(filter.loopId === "" ? {} : { loopId: filter.loopId }),
  };

  // The first page is re-read while any run on it is unfinished, so statuses move by themselves.
  useEffect(() => {
    let current = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    async function poll() {
      try {
        const page = await api.runs.list.query(query);
        if (!current) return;
        setFirstPage(page);
        setError(null);
        if (page.runs.some((run) => !isFinished(run.status))) timer = setTimeout(poll, LIST_POLL_MS);
      } catch (failure) {
        if (current) setError(errorMessage(failure));
      }
    }
    void poll();
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [filter, generation]);

  const cursor = more === undefined ? (firstPage?.nextCursor ?? null) : more.cursor;

  async function loadMore() {
    if (cursor === null) return;
    try {
      const page = await api.runs.list.query({ ...query, cursor });
      setMore((previous) => ({ runs: [...(previous?.runs ?? []), ...page.runs], cursor: page.nextCursor }));
    } catch (failure) {
      setError(errorMessage(failure));
    }
  }

  function changeFilter(name: string, value: string) {
    const next = { ...filter, [name]: value };
    setFirstPage(null);
    setMore(undefined);
    setFilter(next);
    // Replaced, not pushed: Back leaves the list rather than stepping through every filter tried.
    history.replaceState(null, "", paths.runs({ status: next.status, loop: next.loopId }));
  }

  const filtered = filter.status !== "" || filter.loopId !== "";

  const runs = firstPage === null ? null : withoutRepeats(firstPage.runs, more?.runs ?? []);
  return (
    <>
      <PageTitle title="Runs">Runs</PageTitle>
      <form class="filters" aria-label="Filter runs" onSubmit={(event) => event.preventDefault()}>
        <FilterSelect
          id="filter-status"
          label="Status"
          name="status"
          value={filter.status}
          any="Any status"
          options={STATUSES.map((status) => ({ value: status, label: status }))}
          onChange={changeFilter}
        />
        <FilterSelect
          id="filter-loop"
          label="Loop"
          name="loopId"
          value={filter.loopId}
          any="Any loop"
          options={loops.state === "ready" ? loops.value.map((loop) => ({ value: loop.id, label: loop.id })) : []}
          onChange={changeFilter}
        />
        <button type="button" class="secondary" onClick={() => setGeneration((g) => g + 1)}>
          Refresh
        </button>
      </form>
      {error && <Failure message={error} retry={() => setGeneration((g) => g + 1)} />}
      {runs === null && error === null && <Loading what="runs" />}
      {runs !== null && <RunTable runs={runs} empty={filtered ? "No runs match these filters." : "No runs yet."} />}
      {runs !== null && cursor !== null && (
        <button type="button" class="secondary" onClick={loadMore}>
          Load more
        </button>
      )}
    </>
  );
}

/** The fresh first page, then the rows loaded further down that it does not already show. */
function withoutRepeats(first: RunSummary[], further: RunSummary[]): RunSummary[] {
  const seen = new Set(first.map((run) => run.id));
  return [...first, ...further.filter((run) => !seen.has(run.id))];
}

export function RunPage({ runId, canTerminate }: { runId: string; canTerminate: boolean }) {
  const [run, setRun] = useState<Run | null>(null);
  const [error, setError] = useState<{ message: string; missing: boolean } | null>(null);
  const [generation, setGeneration] = useState(0);
  const [terminating, setTerminating] = useState(false);
  const live = run !== null && !isFinished(run.status);
  const now = useNow(live, 1000);

  useEffect(() => {
    let current = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    async function poll() {
      try {
        const fresh = await api.runs.get.query({ id: runId });
        if (!current) return;
        setRun(fresh);
        setError(null);
        if (!isFinished(fresh.status)) timer = setTimeout(poll, RUN_POLL_MS);
      } catch (failure) {
        if (current) setError({ message: errorMessage(failure), missing: errorCode(failure) === "NOT_FOUND" });
      }
    }
    void poll();
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [runId, generation]);

  return (
    <>
      <nav aria-label="Breadcrumb" class="breadcrumb">
        <Link href={paths.runs()}>Runs</Link>
        <span aria-hidden="true"> › </span>
        <span aria-current="page" class="mono">
          {runId}
        </span>
      </nav>
      <div class="title-row">
        <div class="title-with-copy">
          <PageTitle title={`Run ${runId}`}>
            Run <span class="mono">{runId}</span>
          </PageTitle>
          <CopyButton text={runId} label="Copy run id" />
        </div>
        {run !== null && live && canTerminate && (
          <button type="button" class="danger" onClick={() => setTerminating(true)}>
            Terminate…
          </button>
        )}
      </div>
      {error && (
        <Failure message={error.message} retry={error.missing ? undefined : () => setGeneration((g) => g + 1)} />
      )}
      {run === null && error === null && <Loading what="the run" />}
      {run !== null && <RunDetail run={run} live={live} now={now} />}
      {run !== null && terminating && (
        <TerminateDialog run={run} onDone={() => setGeneration((g) => g + 1)} onClose={() => setTerminating(false)} />
      )}
    </>
  );
}

function RunDetail({ run, live, now }: { run: Run; live: boolean; now: number }) {
  return (
    <>
      <section class="card run-summary" aria-label="Summary">
        <dl class="facts">
          <div>
            <dt>Status</dt>
            <dd>
              <span id="run-status" role="status">
                <StatusBadge status={run.status} />
              </span>
              {live && <span class="live">Updating live</span>}
            </dd>
          </div>
          <div>
            <dt>Loop</dt>
            <dd>
              <Link class="mono" href={paths.loop(run.loopId)}>
                {run.loopId}
              </Link>
            </dd>
          </div>
          <div>
            <dt>Triggered by</dt>
            <dd>
              <TriggerTag trigger={run.trigger} />
            </dd>
          </div>
          <div>
            <dt>Started</dt>
            <dd>
              <Time iso={run.startedAt ?? run.createdAt} />
            </dd>
          </div>
          <div>
            <dt>Duration</dt>
            <dd>{runDuration(run, now)}</dd>
          </div>
          <div>
            <dt>Executions</dt>
            <dd>{run.attempts}</dd>
          </div>
        </dl>
        <p class="muted mono small">Workflow instance {run.workflowInstanceId}</p>
      </section>
      <section aria-labelledby="input-title">
        <h2 id="input-title">
          Input <span class="muted">(event.body)</span>
        </h2>
        {run.input === undefined ? (
          <p class="muted">No body was sent: event.body is undefined.</p>
        ) : (
          <JsonWithCopy value={run.input} name="input" label="Copy input" />
        )}
      </section>
      <section aria-labelledby="steps-title">
        <h2 id="steps-title">Steps</h2>
        {run.steps.length === 0 ? (
          <p class="muted">{live ? "No step has started yet." : "This run had no steps."}</p>
        ) : (
          <>
            <Timeline run={run} now={now} />
            <ol class="steps">
              {run.steps.map((step) => (
                <StepItem key={step.key} step={step} />
              ))}
            </ol>
          </>
        )}
      </section>
      <section aria-labelledby="output-title">
        <h2 id="output-title">{run.error !== null ? "Error" : "Output"}</h2>
        {run.error !== null && (
          <pre class="json error-block" data-json="error">
            <code>
              {run.error.name}: {run.error.message}
            </code>
          </pre>
        )}
        {run.error === null && !isFinished(run.status) && <p class="muted">The run has not finished yet.</p>}
        {run.error === null && isFinished(run.status) && (
          <JsonWithCopy value={run.output} name="output" label="Copy output" />
        )}
      </section>
    </>
  );
}

function StepItem({ step }: { step: RunStep }) {
  return (
    <li class="card step" data-step={step.key}>
      <div class="step-head">
        <h3>
          <span class="mono">{step.name}</span>{" "}
          <span class="muted small">{step.kind === "sleep" ? "sleep" : "do"}</span>
        </h3>
        <StatusBadge status={step.status} />
      </div>
      <dl class="facts compact">
        <div>
          <dt>Attempts</dt>
          <dd>{step.attempts}</dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>
            <Time iso={step.startedAt} />
          </dd>
        </div>
        <div>
          <dt>Took</dt>
          <dd>{stepDuration(step.startedAt, step.finishedAt)}</dd>
        </div>
        {step.wakeAt !== null && (
          <div>
            <dt>{step.status === "sleeping" ? "Wakes" : step.status === "complete" ? "Slept until" : "Was to wake"}</dt>
            <dd>
              <Time iso={step.wakeAt} />
            </dd>
          </div>
        )}
      </dl>
      <FailedTries step={step} />
      {step.error !== null && (
        <pre
          class={`json ${step.status === "terminated" ? "note-block" : "error-block"}`}
          data-json={`error:${step.name}`}
        >
          <code>
            {step.error.name}: {step.error.message}
          </code>
        </pre>
      )}
      {step.error === null && step.status === "complete" && step.kind === "do" && (
        <JsonBlock value={step.result} name={`result:${step.name}`} />
      )}
    </li>
  );
}

function JsonWithCopy({ value, name, label }: { value: unknown; name: string; label: string }) {
  return (
    <div class="code-with-copy">
      <JsonBlock value={value} name={name} />
      <CopyButton text={prettyJson(value)} label={label} />
    </div>
  );
}

/** The tries of a step that failed before its outcome (the last one's error is the step's own). */
function FailedTries({ step }: { step: RunStep }) {
  const failed = step.attemptLog.filter((attempt) => attempt.error !== null && attempt.attempt < step.attempts);
  if (failed.length === 0) return null;
  return (
    <details class="tries" data-tries={step.key}>
      <summary>{failed.length === 1 ? "1 failed try" : `${failed.length} failed tries`} before this outcome</summary>
      <ol>
        {failed.map((attempt) => (
          <li key={attempt.attempt} data-try={attempt.attempt}>
            <span class="muted">
              Try {attempt.attempt}, <Time iso={attempt.startedAt} />
              {attempt.finishedAt !== null && `, ${stepDuration(attempt.startedAt, attempt.finishedAt)}`}
            </span>
            <pre class="json error-block">
              <code>
                {attempt.error?.name}: {attempt.error?.message}
              </code>
            </pre>
          </li>
        ))}
      </ol>
    </details>
  );
}

/**
 * A waterfall of the steps, as Trigger.dev draws it: each bar starts and ends where its step did
 * on the run's time axis, so the slow step and the long sleep stand out at a glance.
 */
function Timeline({ run, now }: { run: Run; now: number }) {
  const start = Math.min(...run.steps.map((step) => Date.parse(step.startedAt)));
  const endOf = (step: RunStep): number =>
    step.finishedAt !== null
      ? Date.parse(step.finishedAt)
      : step.wakeAt !== null && step.status === "sleeping"
        ? Date.parse(step.wakeAt)
        : now;
  const end = Math.max(start + 1, ...run.steps.map(endOf));
  const span = end - start;
  const percent = (ms: number) => `${Math.min(100, Math.max(0, (ms / span) * 100)).toFixed(2)}%`;
  return (
    <figure class="timeline" aria-labelledby="timeline-caption">
      <figcaption id="timeline-caption" class="muted small">
        Timeline: {formatDuration(span)} from the first step to the last
      </figcaption>
      <ol>
        {run.steps.map((step) => {
          const from = Date.parse(step.startedAt) - start;
          const length = endOf(step) - Date.parse(step.startedAt);
          return (
            <li key={step.key} class="timeline-row" data-bar={step.key}>
              <span class="timeline-name mono" title={step.name}>
                {step.name}
              </span>
              <span class="timeline-track">
                <span
                  class={`timeline-bar status-${step.status}${step.kind === "sleep" ? " sleep" : ""}`}
                  style={{ marginLeft: percent(from), width: `max(3px, ${percent(length)})` }}
                />
              </span>
              <span class="timeline-duration">{formatDuration(Math.max(0, length))}</span>
            </li>
          );
        })}
      </ol>
    </figure>
  );
}

function TerminateDialog({ run, onDone, onClose }: { run: Run; onDone: () => void; onClose: () => void }) {
  return (
    <ConfirmDialog
      id="terminate-title"
      title="Terminate this run?"
      action="Terminate run"
      busyAction="Terminating…"
      onConfirm={async () => {
        await api.runs.terminate.mutate({ id: run.id });
        onDone();
      }}
      onClose={onClose}
    >
      <p>
        The run of <span class="mono">{run.loopId}</span> stops after its current step and cannot be resumed.
      </p>
    </ConfirmDialog>
  );
}
