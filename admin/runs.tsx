/**
 * Runs: the list, and one run's input (event.body), steps and output. A run that is not
 * finished is polled once a second: simple, and a run's steps rarely change faster than that.
 */
import type { TargetedEvent } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, errorCode, errorMessage, type Run, type RunStatus, type RunStep, type RunSummary } from "./api.ts";
import { isFinished, runDuration, stepDuration } from "./format.ts";
import { Link, paths } from "./router.tsx";
import { ConfirmDialog, Failure, JsonBlock, Loading, PageTitle, StatusBadge, Time, useResource } from "./ui.tsx";

const RUN_POLL_MS = 1000;
const LIST_POLL_MS = 2000;
const PAGE_SIZE = 25;
const STATUSES: RunStatus[] = ["queued", "running", "sleeping", "complete", "errored", "terminated"];

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

export function RunTable({ runs, showLoop = true }: { runs: RunSummary[]; showLoop?: boolean }) {
  const now = useNow(
    runs.some((run) => !isFinished(run.status)),
    1000,
  );
  if (runs.length === 0) return <p class="muted">No runs yet.</p>;
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

export function RunsPage() {
  const [filter, setFilter] = useState<ListFilter>({ status: "", loopId: "" });
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

  function changeFilter(event: TargetedEvent<HTMLSelectElement>) {
    const { name, value } = event.currentTarget;
    setFirstPage(null);
    setMore(undefined);
    setFilter((previous) => ({ ...previous, [name]: value }));
  }

  const runs = firstPage === null ? null : withoutRepeats(firstPage.runs, more?.runs ?? []);
  return (
    <>
      <PageTitle title="Runs">Runs</PageTitle>
      <form class="filters" aria-label="Filter runs" onSubmit={(event) => event.preventDefault()}>
        <div class="field">
          <label for="filter-status">Status</label>
          <select id="filter-status" name="status" value={filter.status} onChange={changeFilter}>
            <option value="">Any status</option>
            {STATUSES.map((status) => (
              <option key={status} value={status}>
                {status}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="filter-loop">Loop</label>
          <select id="filter-loop" name="loopId" value={filter.loopId} onChange={changeFilter}>
            <option value="">Any loop</option>
            {loops.state === "ready" &&
              loops.value.map((loop) => (
                <option key={loop.id} value={loop.id}>
                  {loop.id}
                </option>
              ))}
          </select>
        </div>
        <button type="button" class="secondary" onClick={() => setGeneration((g) => g + 1)}>
          Refresh
        </button>
      </form>
      {error && <Failure message={error} retry={() => setGeneration((g) => g + 1)} />}
      {runs === null && error === null && <Loading what="runs" />}
      {runs !== null && <RunTable runs={runs} />}
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
        <PageTitle title={`Run ${runId}`}>
          Run <span class="mono">{runId}</span>
        </PageTitle>
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
          <JsonBlock value={run.input} name="input" />
        )}
      </section>
      <section aria-labelledby="steps-title">
        <h2 id="steps-title">Steps</h2>
        {run.steps.length === 0 ? (
          <p class="muted">{live ? "No step has started yet." : "This run had no steps."}</p>
        ) : (
          <ol class="steps">
            {run.steps.map((step) => (
              <StepItem key={step.key} step={step} />
            ))}
          </ol>
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
        {run.error === null && isFinished(run.status) && <JsonBlock value={run.output} name="output" />}
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
            <dt>Wakes</dt>
            <dd>
              <Time iso={step.wakeAt} />
            </dd>
          </div>
        )}
      </dl>
      {step.error !== null && (
        <pre class="json error-block" data-json={`error:${step.name}`}>
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
