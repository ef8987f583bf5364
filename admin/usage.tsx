/**
 * Usage: what the gateway did for this organization over a window, from tRPC usage.summary
 * (per-minute rollups on the server). Time series are drawn by uPlot, a small canvas charting
 * library that needs no inline script or style (it sets element styles through the DOM, which the
 * console's CSP allows) and no HTML strings (Trusted Types). Every run figure links to the runs
 * behind it; planning figures have no list behind them, since no prompt is ever kept.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { USAGE_WINDOW_NAMES, type UsageWindow } from "../schema/admin.ts";
import { api, type Usage } from "./api.ts";
import { formatDuration } from "./format.ts";
import { Link, navigate, paths } from "./router.tsx";
import { Failure, FilterSelect, Loading, PageTitle, useResource } from "./ui.tsx";

const POLL_MS = 10_000;
const WINDOW_LABELS: Record<UsageWindow, string> = {
  "1h": "Last hour",
  "24h": "Last 24 hours",
  "7d": "Last 7 days",
  "30d": "Last 30 days",
};

interface UsageFilter {
  window: UsageWindow;
  tokenId: string;
  loopId: string;
}

/** The filter lives in the URL (`?window=7d&loop=loop_intake`), so a view can be shared. */
function filterFromUrl(): UsageFilter {
  const params = new URLSearchParams(location.search);
  const window = params.get("window");
  return {
    window: USAGE_WINDOW_NAMES.find((w) => w === window) ?? "24h",
    tokenId: params.get("token") ?? "",
    loopId: params.get("loop") ?? "",
  };
}

export function UsagePage() {
  const [filter, setFilter] = useState<UsageFilter>(filterFromUrl);
  const [tick, setTick] = useState(0);
  const tokens = useResource(() => api.tokens.list.query(), "tokens");
  const loops = useResource(() => api.loops.list.query(), "loops");
  const usage = useResource(
    () =>
      api.usage.summary.query({
        window: filter.window,
        ...(filter.tokenId === "" ? {} : { tokenId: filter.tokenId }),
        ...(filter.loopId === "" ? {} : { loopId: filter.loopId }),
      }),
    `${filter.window}|${filter.tokenId}|${filter.loopId}|${tick}`,
  );
  useEffect(() => {
    const timer = setInterval(() => setTick((t) => t + 1), POLL_MS);
    return () => clearInterval(timer);
  }, []);

  function change(next: UsageFilter) {
    setFilter(next);
    navigate(`${paths.usage({ window: next.window, token: next.tokenId, loop: next.loopId })}`);
  }

  return (
    <>
      <PageTitle title="Usage">Usage</PageTitle>
      <form class="filters" aria-label="Usage filters" onSubmit={(event) => event.preventDefault()}>
        <fieldset class="segmented">
          <legend class="visually-hidden">Window</legend>
          {USAGE_WINDOW_NAMES.map((w) => (
            <label key={w} class={filter.window === w ? "selected" : undefined}>
              <input
                type="radio"
                name="window"
                value={w}
                checked={filter.window === w}
                onChange={() => change({ ...filter, window: w })}
              />
              {WINDOW_LABELS[w]}
            </label>
          ))}
        </fieldset>
        <FilterSelect
          id="usage-token"
          label="Token"
          name="tokenId"
          value={filter.tokenId}
          any="Every token"
          options={
            tokens.state === "ready" ? tokens.value.map((token) => ({ value: token.id, label: token.name })) : []
          }
          onChange={(name, value) => change({ ...filter, [name]: value })}
        />
        <FilterSelect
          id="usage-loop"
          label="Loop"
          name="loopId"
          value={filter.loopId}
          any="Every loop"
          options={loops.state === "ready" ? loops.value.map((loop) => ({ value: loop.id, label: loop.id })) : []}
          onChange={(name, value) => change({ ...filter, [name]: value })}
        />
      </form>
      {usage.state === "loading" && <Loading what="usage" />}
      {usage.state === "failed" && <Failure message={usage.message} retry={usage.reload} />}
      {usage.state === "ready" && <UsageView usage={usage.value} loopId={filter.loopId} />}
    </>
  );
}

const count = (n: number) => n.toLocaleString("en-US");
const ms = (value: number | null) => (value === null ? "–" : formatDuration(value));

function Figure({ label, value, href, warn }: { label: string; value: string; href?: string; warn?: boolean }) {
  return (
    <div class={`figure${warn === true ? " warn" : ""}`}>
      <dt>{label}</dt>
      <dd>{href === undefined ? value : <Link href={href}>{value}</Link>}</dd>
    </div>
  );
}

function UsageView({ usage, loopId }: { usage: Usage; loopId: string }) {
  const p = usage.planning;
  const r = usage.runs;
  const runs = (status: string) => paths.runs({ loop: loopId, status });
  return (
    <>
      <section aria-labelledby="planning-heading" class="usage-section">
        <h2 id="planning-heading">Planning</h2>
        <dl class="figures">
          <Figure label="Requests" value={count(p.requests)} />
          <Figure
            label="Cache hit rate"
            value={p.cacheHitRate === null ? "–" : `${Math.round(p.cacheHitRate * 100)}% (${count(p.cacheHits)})`}
          />
          <Figure label="Clinical blocks" value={count(p.clinicalBlocks)} />
          <Figure label="Rate-limited (429)" value={count(p.rateLimited)} warn={p.rateLimited > 0} />
          <Figure label="Upstream errors" value={count(p.upstreamErrors)} warn={p.upstreamErrors > 0} />
          <Figure label="Upstream timeouts" value={count(p.upstreamTimeouts)} warn={p.upstreamTimeouts > 0} />
        </dl>
        <table class="latency">
          <caption>Latency</caption>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">p50</th>
              <th scope="col">p95</th>
              <th scope="col">p99</th>
            </tr>
          </thead>
          <tbody>
            {(
              [
                ["Gateway", p.gatewayMs],
                ["Upstream", p.upstreamMs],
              ] as const
            ).map(([name, times]) => (
              <tr key={name}>
                <th scope="row">{name}</th>
                <td>{ms(times.p50)}</td>
                <td>{ms(times.p95)}</td>
                <td>{ms(times.p99)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <Chart
          label="Planning calls over time"
          t={usage.series.t}
          series={[
            { label: "Requests", values: usage.series.requests, color: "#2563eb" },
            { label: "Cache hits", values: usage.series.cacheHits, color: "#16a34a" },
            { label: "Clinical blocks", values: usage.series.clinicalBlocks, color: "#9333ea" },
            { label: "429s", values: usage.series.rateLimited, color: "#d97706" },
            { label: "Upstream errors", values: usage.series.upstreamErrors, color: "#dc2626" },
          ]}
        />
      </section>
      <section aria-labelledby="runs-heading" class="usage-section">
        <h2 id="runs-heading">Runs</h2>
        <dl class="figures">
          <Figure label="Started" value={count(r.started)} href={runs("")} />
          <Figure label="Completed" value={count(r.completed)} href={runs("complete")} />
          <Figure label="Errored" value={count(r.errored)} href={runs("errored")} warn={r.errored > 0} />
          <Figure label="In flight" value={count(r.inFlight)} href={runs("running")} />
          <Figure label="Queued" value={count(r.queued)} href={runs("queued")} />
          <Figure label="Duration p50 / p95" value={`${ms(r.durationMs.p50)} / ${ms(r.durationMs.p95)}`} />
        </dl>
        <Chart
          label="Runs over time"
          t={usage.series.t}
          series={[
            { label: "Started", values: usage.series.runsStarted, color: "#2563eb" },
            { label: "Completed", values: usage.series.runsCompleted, color: "#16a34a" },
            { label: "Errored", values: usage.series.runsErrored, color: "#dc2626" },
          ]}
        />
        <FailingLoops loops={r.failingLoops} />
      </section>
    </>
  );
}

type FailingLoop = Usage["runs"]["failingLoops"][number];
type SortKey = "loopId" | "errored" | "completed";

function FailingLoops({ loops }: { loops: FailingLoop[] }) {
  const [sort, setSort] = useState<{ key: SortKey; descending: boolean }>({ key: "errored", descending: true });
  if (loops.length === 0) return <p class="muted">No loop failed in this window.</p>;
  const sorted = [...loops].sort((a, b) => {
    const order = sort.key === "loopId" ? a.loopId.localeCompare(b.loopId) : a[sort.key] - b[sort.key];
    return sort.descending ? -order : order;
  });
  const header = (key: SortKey, label: string) => (
    <th scope="col" aria-sort={sort.key === key ? (sort.descending ? "descending" : "ascending") : "none"}>
      <button
        type="button"
        class="link"
        onClick={() => setSort({ key, descending: sort.key === key ? !sort.descending : key !== "loopId" })}
      >
        {label}
      </button>
    </th>
  );
  return (
    <table class="failing-loops">
      <caption>Loops that fail most</caption>
      <thead>
        <tr>
          {header("loopId", "Loop")}
          {header("errored", "Errored")}
          {header("completed", "Completed")}
        </tr>
      </thead>
      <tbody>
        {sorted.map((loop) => (
          <tr key={loop.loopId}>
            <td>
              <Link class="mono" href={paths.loop(loop.loopId)}>
                {loop.loopId}
              </Link>
            </td>
            <td>
              <Link href={paths.runs({ loop: loop.loopId, status: "errored" })}>{count(loop.errored)}</Link>
            </td>
            <td>
              <Link href={paths.runs({ loop: loop.loopId, status: "complete" })}>{count(loop.completed)}</Link>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

interface ChartSeries {
  label: string;
  values: number[];
  color: string;
}

/** One uPlot chart, redrawn when its data changes and resized with its container. */
function Chart({ label, t, series }: { label: string; t: number[]; series: ChartSeries[] }) {
  const container = useRef<HTMLElement>(null);
  // Redrawn when the figures change, not on every render of the page.
  const data = JSON.stringify({ t, series });
  useEffect(() => {
    const element = container.current;
    if (element === null) return;
    const figures = JSON.parse(data) as { t: number[]; series: ChartSeries[] };
    const width = () => Math.max(280, element.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height: 220,
        series: [
          {},
          ...figures.series.map((s) => ({ label: s.label, stroke: s.color, width: 2, points: { show: false } })),
        ],
        scales: { x: { time: true } },
        axes: [{}, { size: 48 }],
      },
      [figures.t.map((ms) => ms / 1000), ...figures.series.map((s) => s.values)],
      element,
    );
    const observer = new ResizeObserver(() => plot.setSize({ width: width(), height: 220 }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [data]);
  return <figure class="chart" ref={container} aria-label={label} />;
}
