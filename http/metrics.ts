/**
 * Prometheus metrics of the HTTP side. prom-client (the maintained client) owns the registry, the
 * process metrics and the text exposition; the per-request figures are kept in plain maps and
 * handed to it when scraped, because prom-client re-hashes a label object on every increment and
 * that cost the cache-hit path about a tenth of its throughput (measured with bench/planning.ts).
 * One registry per app, so several servers in one process (tests) do not collide.
 *
 * Requests are recorded once each, as their response or problem is rendered (RequestState.done),
 * from what the plugins already noted on the state: no extra hook runs. Labels are route patterns,
 * methods, statuses, plugin names and problem codes: never an id, a company, a token or a prompt.
 */
import { collectDefaultMetrics, type Metric, Registry } from "prom-client";
import type { RequestState } from "./context.ts";

/** Seconds: from 0.25 ms (a cache hit) to 10 s (a slow upstream). */
const LATENCY_BUCKETS = [0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type Labels = Record<string, string | number>;
type Sample = { labels: Labels; value: number; metricName?: string };

/** Counts per label set, keyed by a string the caller builds once per label set. */
class Tally {
  private readonly series = new Map<string, { labels: Labels; value: number }>();

  add(key: string, labels: () => Labels, by = 1): void {
    const found = this.series.get(key);
    if (found !== undefined) found.value += by;
    else this.series.set(key, { labels: labels(), value: by });
  }

  samples(): Sample[] {
    return [...this.series.values()].map(({ labels, value }) => ({ labels, value }));
  }
}

/** A histogram per label set: one counter per bucket, a sum and a count. */
class Buckets {
  private readonly series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();

  constructor(
    private readonly name: string,
    private readonly bounds: readonly number[],
  ) {}

  observe(key: string, labels: () => Labels, value: number): void {
    let found = this.series.get(key);
    if (found === undefined) {
      found = { labels: labels(), counts: this.bounds.map(() => 0), sum: 0, count: 0 };
      this.series.set(key, found);
    }
    const index = this.bounds.findIndex((bound) => value <= bound);
    if (index !== -1) found.counts[index] = (found.counts[index] ?? 0) + 1;
    found.sum += value;
    found.count += 1;
  }

  samples(): Sample[] {
    const out: Sample[] = [];
    for (const { labels, counts, sum, count } of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((bound, i) => {
        cumulative += counts[i] ?? 0;
        out.push({ labels: { ...labels, le: bound }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      out.push({ labels: { ...labels, le: "+Inf" }, value: count, metricName: `${this.name}_bucket` });
      out.push({ labels, value: sum, metricName: `${this.name}_sum` });
      out.push({ labels, value: count, metricName: `${this.name}_count` });
    }
    return out;
  }
}

/** Puts figures kept elsewhere into the registry, read when it is scraped. */
function publish(
  registry: Registry,
  name: string,
  help: string,
  type: "counter" | "histogram",
  samples: () => Sample[],
): void {
  const metric = {
    name,
    help,
    type,
    aggregator: "sum",
    get: async () => ({ name, help, type, aggregator: "sum", values: samples() }),
    reset() {},
  };
  registry.registerMetric(metric as unknown as Metric);
}

export type HttpMetrics = ReturnType<typeof createHttpMetrics>;

export function createHttpMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "health_" });

  const requests = new Tally();
  const duration = new Buckets("health_http_request_duration_seconds", LATENCY_BUCKETS);
  const pluginSeconds = new Tally();
  const pluginCalls = new Tally();
  const cache = new Tally();
  const clinical = new Tally();
  const refused = new Tally();
  const upstream = new Buckets("health_upstream_duration_seconds", LATENCY_BUCKETS);
  const upstreamErrors = new Tally();

  publish(
    registry,
    "health_http_requests_total",
    "HTTP requests answered, by route pattern, method and status",
    "counter",
    () => requests.samples(),
  );
  publish(
    registry,
    "health_http_request_duration_seconds",
    "Time from a request's arrival to its response being rendered, by route pattern",
    "histogram",
    () => duration.samples(),
  );
  // Per plugin, a running total and a count (rate(seconds) / rate(calls) is the mean time).
  publish(
    registry,
    "health_plugin_seconds_total",
    "Time spent in each plugin (the planning chain, and auth)",
    "counter",
    () => pluginSeconds.samples(),
  );
  publish(registry, "health_plugin_calls_total", "Requests each plugin handled", "counter", () =>
    pluginCalls.samples(),
  );
  publish(registry, "health_plan_cache_total", "Planning answers by cache outcome (hit, miss, bypass)", "counter", () =>
    cache.samples(),
  );
  publish(registry, "health_clinical_blocks_total", "Planning calls blocked as clinical advice", "counter", () =>
    clinical.samples(),
  );
  publish(registry, "health_rate_limit_refusals_total", "Planning calls refused with 429", "counter", () =>
    refused.samples(),
  );
  publish(
    registry,
    "health_upstream_duration_seconds",
    "Time of the upstream planning call, retries included",
    "histogram",
    () => upstream.samples(),
  );
  publish(registry, "health_upstream_errors_total", "Upstream failures, by problem code", "counter", () =>
    upstreamErrors.samples(),
  );
  const none = () => ({});

  /** Records one finished request; plugged into RequestState.done. */
  function observe(state: RequestState, route: string, status: number, problem?: string): void {
    const { method } = state;
    requests.add(`${route} ${method} ${status}`, () => ({ route, method, status }));
    duration.observe(route, () => ({ route }), (performance.now() - state.startedAt) / 1000);
    for (const { name, ms } of state.pluginTimes()) {
      pluginSeconds.add(name, () => ({ plugin: name }), ms / 1000);
      pluginCalls.add(name, () => ({ plugin: name }));
    }
    if (!state.chain.includes("planning")) return;
    if (status === 429) refused.add("", none);
    if (problem === "upstream_error" || problem === "upstream_timeout") {
      upstreamErrors.add(problem, () => ({ code: problem }));
    }
    if (state.intent === "clinical_blocked") clinical.add("", none);
    else if (status === 200) cache.add(state.cache, () => ({ result: state.cache }));
    if (state.upstreamLatencyMs !== undefined) upstream.observe("", none, state.upstreamLatencyMs / 1000);
  }

  return { registry, observe };
}
