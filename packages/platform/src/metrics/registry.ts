import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { MetricDef } from "./catalog";
import { createLabelBounds, type LabelSet } from "./labels";

export interface CounterMetric {
  inc(labels?: LabelSet, by?: number): void;
}

export interface GaugeMetric {
  set(labels: LabelSet, value: number): void;
  inc(labels?: LabelSet, by?: number): void;
  dec(labels?: LabelSet, by?: number): void;
  /** Forgets every series (a value no longer known is better absent than stale). */
  reset(): void;
}

export interface HistogramMetric {
  /** Records one duration, in seconds. */
  observe(labels: LabelSet, seconds: number): void;
}

/** Called at each scrape to bring a gauge up to date: cheap reads (a pool's counters), or a refresh no more frequent than a few seconds. */
export type GaugeCollector = (gauge: GaugeMetric) => void | Promise<void>;

/** One process's metrics: Node's defaults (prefix `steward_`) and the catalog's, each label value bounded. */
export interface Metrics {
  readonly contentType: string;
  counter(def: MetricDef): CounterMetric;
  gauge(def: MetricDef, collect?: GaugeCollector): GaugeMetric;
  /** `collect`, if given, runs at each scrape before the histogram is read (to observe what a poll found). */
  histogram(def: MetricDef, collect?: () => Promise<void>): HistogramMetric;
  /** The exposition text, as served on `/metrics`. */
  text(): Promise<string>;
}

export interface MetricsOptions {
  /** Node's process and runtime metrics (event loop lag, heap, GC, CPU). Default true. */
  defaults?: boolean;
}

function kindCheck(def: MetricDef, kind: MetricDef["kind"]): void {
  if (def.kind !== kind) throw new TypeError(`metric ${def.name} is a ${def.kind}, not a ${kind}`);
}

/** A registry of this process's own (never prom-client's global one), every series labelled `service`. */
export function createMetrics(service: string, options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  if (options.defaults ?? true) collectDefaultMetrics({ register: registry, prefix: "steward_" });
  const common = (def: MetricDef) => ({ name: def.name, help: def.help, labelNames: Object.keys(def.labels), registers: [registry] });
  return {
    contentType: registry.contentType,
    counter(def) {
      kindCheck(def, "counter");
      const bound = createLabelBounds(def);
      const counter = new Counter(common(def));
      return { inc: (labels = {}, by = 1) => counter.inc(bound(labels), by) };
    },
    gauge(def, collect) {
      kindCheck(def, "gauge");
      const bound = createLabelBounds(def);
      let self: GaugeMetric;
      const gauge: Gauge = new Gauge({ ...common(def), ...(collect ? { collect: () => collect(self) } : {}) });
      self = {
        set: (labels, value) => gauge.set(bound(labels), value),
        inc: (labels = {}, by = 1) => gauge.inc(bound(labels), by),
        dec: (labels = {}, by = 1) => gauge.dec(bound(labels), by),
        reset: () => gauge.reset(),
      };
      return self;
    },
    histogram(def, collect) {
      kindCheck(def, "histogram");
      const bound = createLabelBounds(def);
      const histogram = new Histogram({ ...common(def), buckets: [...(def.buckets ?? [])], ...(collect ? { collect } : {}) });
      return { observe: (labels, seconds) => histogram.observe(bound(labels), seconds) };
    },
    text: () => registry.metrics(),
  };
}

/** Seconds since `startedAt` (a `performance.now()` reading). */
export function secondsSince(startedAt: number): number {
  return (performance.now() - startedAt) / 1000;
}
