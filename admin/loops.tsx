/**
 * Loops: the organization's loops, and each loop's overview with its trigger URL, a curl to
 * copy, its recent runs and the Run action (docs/interface.md §4.3), which starts a run tagged with the user.
 */
import type { TargetedSubmitEvent } from "preact";
import { useState } from "preact/hooks";
import { api, errorMessage, type Loop, type LoopModuleProblem } from "./api.ts";
import { curlCommand } from "./format.ts";
import { checkJsonBody } from "./json-body.ts";
import { Link, navigate, paths } from "./router.tsx";
import { RunTable } from "./runs.tsx";
import {
  CopyButton,
  closeDialogOf,
  Failure,
  Loading,
  Modal,
  PageTitle,
  StatusBadge,
  Time,
  useResource,
} from "./ui.tsx";

export function LoopsPage() {
  const loops = useResource(() => api.loops.list.query(), "loops");
  const skipped = useResource(() => api.loops.skipped.query(), "skipped");
  const skippedCount = skipped.state === "ready" ? skipped.value.length : 0;
  return (
    <>
      <PageTitle title="Loops">Loops</PageTitle>
      <p class="lead">
        Each module in the server's loops folder is a loop. Trigger one over HTTP with an API token, or run it from
        here.
      </p>
      {loops.state === "loading" && <Loading what="loops" />}
      {loops.state === "failed" && <Failure message={loops.message} retry={loops.reload} />}
      {loops.state === "ready" && loops.value.length === 0 && (
        <p class="muted">
          {skippedCount > 0
            ? "No loop loaded: every module of the loops folder was skipped (below)."
            : "No loops yet. Add a module that exports a Workflow class to the loops folder and restart."}
        </p>
      )}
      {loops.state === "ready" && loops.value.length > 0 && (
        <ul class="cards" aria-label="Loops">
          {loops.value.map((loop) => (
            <li key={loop.id} class="card loop-card">
              <h2>
                <Link href={paths.loop(loop.id)}>{loop.name}</Link>
              </h2>
              <p class="mono muted">{loop.id}</p>
              <p class="mono trigger-url">POST {loop.triggerUrl}</p>
              <LastDay loopId={loop.id} stats={loop.lastDay} />
            </li>
          ))}
        </ul>
      )}
      {skipped.state === "ready" && skippedCount > 0 && <SkippedModules modules={skipped.value} />}
    </>
  );
}

/** The last run and the last 24 hours of a loop, on its card. */
function LastDay({ loopId, stats }: { loopId: string; stats: Loop["lastDay"] }) {
  const { lastRun, runs, complete, errored } = stats;
  return (
    <div class="loop-stats">
      <p data-stats="last-run">
        {lastRun === null ? (
          <span class="muted">Never run</span>
        ) : (
          <>
            Last run <StatusBadge status={lastRun.status} /> <Time iso={lastRun.createdAt} />
          </>
        )}
      </p>
      <p data-stats="last-day" class="muted">
        Last 24 h: {runs === 1 ? "1 run" : `${runs} runs`}
        {runs > 0 && `, ${complete} complete, `}
        {runs > 0 && errored === 0 && "0 errored"}
        {errored > 0 && <Link href={paths.runs({ status: "errored", loop: loopId })}>{errored} errored</Link>}
      </p>
    </div>
  );
}

/** Modules the server could not load at start, each with the place to fix it. */
function SkippedModules({ modules }: { modules: LoopModuleProblem[] }) {
  return (
    <section class="card skipped" aria-labelledby="skipped-title">
      <h2 id="skipped-title">{modules.length === 1 ? "1 module skipped" : `${modules.length} modules skipped`}</h2>
      <p class="hint">Fix these files and restart the server; the other loops run meanwhile.</p>
      <ul class="skipped-list" aria-label="Skipped modules">
        {modules.map((module) => (
          <li key={module.file} class="skipped-item">
            <p class="mono">{module.location ?? module.file}</p>
            <p class="field-error">{module.message}</p>
          </li>
        ))}
      </ul>
    </section>
  );
}

export function LoopPage({ loopId, canRun }: { loopId: string; canRun: boolean }) {
  const loops = useResource(() => api.loops.list.query(), "loops");
  const runs = useResource(() => api.runs.list.query({ loopId, limit: 10 }), loopId);
  const [running, setRunning] = useState(false);
  const loop = loops.state === "ready" ? loops.value.find((candidate) => candidate.id === loopId) : undefined;
  const title = loop?.name ?? loopId;

  return (
    <>
      <nav aria-label="Breadcrumb" class="breadcrumb">
        <Link href={paths.loops()}>Loops</Link>
        <span aria-hidden="true"> › </span>
        <span aria-current="page">{loopId}</span>
      </nav>
      <div class="title-row">
        <PageTitle title={title}>{title}</PageTitle>
        {loop && canRun && (
          <button type="button" onClick={() => setRunning(true)}>
            Run…
          </button>
        )}
      </div>
      {loops.state === "loading" && <Loading what="the loop" />}
      {loops.state === "failed" && <Failure message={loops.message} retry={loops.reload} />}
      {loops.state === "ready" && loop === undefined && (
        <Failure message={`There is no loop ${loopId} in this organization.`} />
      )}
      {loop && <TriggerHelp loop={loop} />}
      {loop && (
        <section aria-labelledby="recent-runs-title">
          <h2 id="recent-runs-title">Recent runs</h2>
          {runs.state === "loading" && <Loading what="runs" />}
          {runs.state === "failed" && <Failure message={runs.message} retry={runs.reload} />}
          {runs.state === "ready" && <RunTable runs={runs.value.runs} showLoop={false} />}
          <p>
            <Link href={paths.runs()}>All runs</Link>
          </p>
        </section>
      )}
      {loop && running && <RunDialog loop={loop} onClose={() => setRunning(false)} />}
    </>
  );
}

function TriggerHelp({ loop }: { loop: Loop }) {
  const curl = curlCommand(loop.triggerUrl);
  return (
    <section class="card" aria-labelledby="trigger-title">
      <h2 id="trigger-title">Trigger over HTTP</h2>
      <p class="mono muted">{loop.id}</p>
      <label for="trigger-url">Trigger URL</label>
      <div class="copy-row">
        <input
          id="trigger-url"
          class="mono"
          readOnly
          value={loop.triggerUrl}
          onFocus={(event) => event.currentTarget.select()}
        />
        <CopyButton text={loop.triggerUrl} label="Copy trigger URL" selectId="trigger-url" />
      </div>
      <h3 id="curl-title">With curl</h3>
      <p class="hint">
        Set <code>HEALTH_TOKEN</code> to an API token whose scope covers this loop. The JSON body becomes{" "}
        <code>event.body</code>; the answer is <code>202</code> with the run's id.
      </p>
      <div class="code-with-copy">
        <pre class="json" data-json="curl">
          <code>{curl}</code>
        </pre>
        <CopyButton text={curl} label="Copy curl command" />
      </div>
    </section>
  );
}

function RunDialog({ loop, onClose }: { loop: Loop; onClose: () => void }) {
  const [text, setText] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const check = checkJsonBody(text);

  async function submit(event: TargetedSubmitEvent<HTMLFormElement>) {
    event.preventDefault();
    // Enter in a field still submits; an invalid body is refused here, not sent.
    if (!check.ok || busy) return;
    const form = event.currentTarget;
    setBusy(true);
    setError(null);
    try {
      const started = await api.runs.start.mutate(
        check.empty ? { loopId: loop.id } : { loopId: loop.id, body: check.body },
      );
      closeDialogOf(form);
      navigate(paths.run(started.runId));
    } catch (failure) {
      setError(errorMessage(failure));
      setBusy(false);
    }
  }

  const state = !check.ok ? check.message : check.empty ? "No body: event.body will be undefined." : "Valid JSON.";
  return (
    <Modal labelledBy="run-title" onClose={onClose} initialFocus="textarea">
      <form onSubmit={submit} noValidate>
        <h2 id="run-title">Run {loop.name}</h2>
        <p class="hint">The run is tagged with your account.</p>
        <div class="field">
          <label for="run-body">
            JSON body <span class="muted">(optional)</span>
          </label>
          <textarea
            id="run-body"
            name="body"
            class="mono"
            rows={8}
            spellcheck={false}
            autoComplete="off"
            placeholder='{"source": "intake-form", "batch": 3}'
            value={text}
            aria-invalid={!check.ok}
            aria-describedby="run-body-state"
            onInput={(event) => setText(event.currentTarget.value)}
          />
          <p id="run-body-state" class={check.ok ? "hint valid" : "field-error"} aria-live="polite">
            {state}
          </p>
        </div>
        {error && (
          <p class="field-error" role="alert">
            {error}
          </p>
        )}
        <div class="dialog-actions">
          <button type="button" class="secondary" onClick={(event) => closeDialogOf(event.currentTarget)}>
            Cancel
          </button>
          <button type="submit" disabled={!check.ok || busy}>
            {busy ? "Starting…" : "Start run"}
          </button>
        </div>
      </form>
    </Modal>
  );
}
