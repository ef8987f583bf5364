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

/**
 * Counts per label set, keyed by a value that stands for it (a plugin name, a problem code); the
 * labels are made from the key once, when a series first appears, so counting allocates nothing.
 */
class Tally<K = string> {
  private readonly series = new Map<K, { labels: Labels; value: number }>();

  constructor(private readonly labelsOf: (key: K) => Labels) {}

  add(key: K, by = 1): void {
    const found = this.series.get(key);
    if (found !== undefined) found.value += by;
    else this.series.set(key, { labels: this.labelsOf(key), value: by });
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
    private readonly labelsOf: (key: string) => Labels,
  ) {}

  observe(key: string, value: number): void {
    let found = this.series.get(key);
    if (found === undefined) {
      found = { labels: this.labelsOf(key), counts: this.bounds.map(() => 0), sum: 0, count: 0 };
      this.series.set(key, found);
    }
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= (bounds[i] as number)) {
        found.counts[i] = (found.counts[i] ?? 0) + 1;
        break;
      }
    }
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

/**
 * Requests by route, method and status. The series of the previous request is kept at hand: under
 * load most requests repeat it, and finding it again would cost a key string built and hashed.
 */
class RequestCounts {
  private readonly series = new Map<string, { labels: Labels; value: number }>();
  private last: { route: string; method: string; status: number; entry: { value: number } } | undefined;

  add(route: string, method: string, status: number): void {
    const last = this.last;
    if (last !== undefined && last.route === route && last.method === method && last.status === status) {
      last.entry.value += 1;
      return;
    }
    const key = `${route} ${method} ${status}`;
    let entry = this.series.get(key);
    if (entry === undefined) {
      entry = { labels: { route, method, status }, value: 0 };
      this.series.set(key, entry);
    }
    entry.value += 1;
    this.last = { route, method, status, entry };
  }

  samples(): Sample[] {
    return [...this.series.values()].map(({ labels, value }) => ({ labels, value }));
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

  const requests = new RequestCounts();
  const duration = new Buckets("health_http_request_duration_seconds", LATENCY_BUCKETS, (route) => ({ route }));
  const pluginSeconds = new Tally((plugin) => ({ plugin }));
  const pluginCalls = new Tally((plugin) => ({ plugin }));
  const cache = new Tally((result) => ({ result }));
  const clinical = new Tally(() => ({}));
  const refused = new Tally(() => ({}));
  const upstream = new Buckets("health_upstream_duration_seconds", LATENCY_BUCKETS, () => ({}));
  const upstreamErrors = new Tally((code) => ({ code }));

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
  /** Records one finished request; plugged into RequestState.done. */
  function observe(state: RequestState, route: string, status: number, problem?: string): void {
    requests.add(route, state.method, status);
    duration.observe(route, (performance.now() - state.startedAt) / 1000);
    for (const { name, ms } of state.pluginTimes()) {
      pluginSeconds.add(name, ms / 1000);
      pluginCalls.add(name);
    }
    if (!state.chain.includes("planning")) return;
    if (status === 429) refused.add("");
    if (problem === "upstream_error" || problem === "upstream_timeout") upstreamErrors.add(problem);
    if (state.intent === "clinical_blocked") clinical.add("");
    else if (status === 200) cache.add(state.cache);
    if (state.upstreamLatencyMs !== undefined) upstream.observe("", state.upstreamLatencyMs / 1000);
  }

  return { registry, observe };
}
