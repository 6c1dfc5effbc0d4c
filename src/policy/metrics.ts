/**
 * In-process metrics, rendered in the Prometheus text exposition format (version 0.0.4): requests
 * by method and outcome, errors by code, a latency histogram by method, bytes read, and gauges read
 * from callbacks when rendered (active subscriptions, …). No dependency: the format is a few lines.
 */
import type { OperationEntry } from './audit.js';

/** The `Content-Type` to serve {@link Metrics.render}'s output with. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Upper bounds of the latency histogram's buckets, in seconds (`+Inf` is added). */
export const LATENCY_BUCKETS_SECONDS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** Label sets one family keeps apart; beyond this, new ones are counted under the value `_other`. */
const MAX_SERIES = 1000;
const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/** What `observe` reads from an operation record (an audit entry fits). */
export type MetricsEntry = Pick<
  OperationEntry,
  'method' | 'outcome' | 'code' | 'bytes' | 'durationMs'
>;

export interface Metrics {
  /** Counts one finished operation. */
  observe(entry: MetricsEntry): void;
  /** Counts one HTTP request refused by authentication (401, 403, 400, 429), by status and reason. */
  refused(status: number, reason: string): void;
  /** Adds a gauge whose value `read` returns at each render; a name can be used once. */
  gauge(name: string, help: string, read: () => number): void;
  /** The exposition text, ending in a newline. */
  render(): string;
}

/**
 * Builds an empty registry.
 *
 * @example
 * const metrics = createMetrics();
 * metrics.gauge('reservoir_active_subscriptions', 'Resources with at least one subscriber.', () => subscriptions.size);
 * metrics.observe({ method: 'resources/read', outcome: 'ok', bytes: 512, durationMs: 3.2 });
 * response.end(metrics.render());
 */
export function createMetrics(options: { labels?: Record<string, string> } = {}): Metrics {
  // Labels on every sample, e.g. `instance` in cluster mode.
  const base: Labels = Object.entries(options.labels ?? {});
  const requests = new Family<number>(['method', 'outcome']);
  const errors = new Family<number>(['code']);
  const latency = new Family<{ buckets: number[]; sum: number; count: number }>(['method']);
  const refusals = new Family<number>(['status', 'reason']);
  let bytesRead = 0;
  const gauges = new Map<string, { help: string; read: () => number }>();
  const builtIn = [
    'reservoir_requests_total',
    'reservoir_errors_total',
    'reservoir_request_duration_seconds',
    'reservoir_read_bytes_total',
    'reservoir_auth_failures_total',
  ];

  return {
    observe(entry) {
      const method = String(entry.method);
      requests.series(method, entry.outcome, zero).value += 1;
      if (entry.outcome === 'error')
        errors.series(entry.code ?? 'internal', undefined, zero).value += 1;
      const seconds = Math.max(0, Number(entry.durationMs) / 1000);
      const h = latency.series(method, undefined, emptyHistogram).value;
      let index = 0;
      while (index < LATENCY_BUCKETS_SECONDS.length && seconds > LATENCY_BUCKETS_SECONDS[index]!)
        index += 1;
      if (index < h.buckets.length) h.buckets[index] = (h.buckets[index] ?? 0) + 1;
      h.sum += seconds;
      h.count += 1;
      if (typeof entry.bytes === 'number' && entry.bytes > 0) bytesRead += entry.bytes;
    },
    refused(status, reason) {
      refusals.series(String(status), reason, zero).value += 1;
    },
    gauge(name, help, read) {
      if (!NAME.test(name))
        throw new RangeError(`metric name ${JSON.stringify(name)} is not a valid Prometheus name`);
      if (gauges.has(name) || builtIn.includes(name))
        throw new RangeError(`metric ${name} is already registered`);
      gauges.set(name, { help, read });
    },
    render() {
      const out: string[] = [];
      header(
        out,
        'reservoir_requests_total',
        'counter',
        'MCP operations handled, by method and outcome.',
      );
      for (const [labels, value] of requests.all())
        out.push(sample(base, 'reservoir_requests_total', labels, value));
      header(
        out,
        'reservoir_errors_total',
        'counter',
        'MCP operations that failed, by error code.',
      );
      for (const [labels, value] of errors.all())
        out.push(sample(base, 'reservoir_errors_total', labels, value));
      const histogram = 'reservoir_request_duration_seconds';
      header(
        out,
        histogram,
        'histogram',
        'Time to handle an MCP operation, by method, in seconds.',
      );
      for (const [labels, h] of latency.all()) {
        let cumulative = 0;
        LATENCY_BUCKETS_SECONDS.forEach((le, i) => {
          cumulative += h.buckets[i] ?? 0;
          out.push(
            sample(base, `${histogram}_bucket`, [...labels, ['le', number(le)]], cumulative),
          );
        });
        out.push(sample(base, `${histogram}_bucket`, [...labels, ['le', '+Inf']], h.count));
        out.push(sample(base, `${histogram}_sum`, labels, h.sum));
        out.push(sample(base, `${histogram}_count`, labels, h.count));
      }
      header(out, 'reservoir_read_bytes_total', 'counter', 'Bytes of resource content read.');
      out.push(sample(base, 'reservoir_read_bytes_total', [], bytesRead));
      header(
        out,
        'reservoir_auth_failures_total',
        'counter',
        'HTTP requests refused by authentication, by status and reason.',
      );
      for (const [labels, value] of refusals.all())
        out.push(sample(base, 'reservoir_auth_failures_total', labels, value));
      for (const [name, gauge] of gauges) {
        header(out, name, 'gauge', gauge.help);
        let value: number;
        try {
          value = gauge.read();
        } catch {
          continue; // a failing callback leaves its gauge without a sample, not the page broken
        }
        out.push(sample(base, name, [], value));
      }
      return `${out.join('\n')}\n`;
    },
  };
}

type Labels = Array<[string, string]>;

const zero = (): number => 0;
const emptyHistogram = (): { buckets: number[]; sum: number; count: number } => ({
  buckets: LATENCY_BUCKETS_SECONDS.map(() => 0),
  sum: 0,
  count: 0,
});

/** One metric's series (of one or two labels), keyed by label values. */
class Family<V> {
  private readonly byKey = new Map<string, { labels: Labels; value: V }>();
  constructor(private readonly names: readonly string[]) {}

  /** The series for these label values, made with `initial` when new (beyond MAX_SERIES: the `_other` series). */
  series(first: string, second: string | undefined, initial: () => V): { value: V } {
    // Label values are method names, outcomes and error codes (the server's own words), none with a NUL.
    let key = second === undefined ? first : `${first}\u0000${second}`;
    let found = this.byKey.get(key);
    if (found !== undefined) return found;
    let values = second === undefined ? [first] : [first, second];
    if (this.byKey.size >= MAX_SERIES) {
      values = values.map(() => '_other');
      key = values.join('\u0000');
      found = this.byKey.get(key);
      if (found !== undefined) return found;
    }
    found = {
      labels: this.names.map((name, i): [string, string] => [name, values[i] ?? '']),
      value: initial(),
    };
    this.byKey.set(key, found);
    return found;
  }

  *all(): Generator<[Labels, V]> {
    for (const { labels, value } of this.byKey.values()) yield [labels, value];
  }
}

function header(out: string[], name: string, type: string, help: string): void {
  out.push(
    `# HELP ${name} ${help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`,
    `# TYPE ${name} ${type}`,
  );
}

function sample(base: Labels, name: string, labels: Labels, value: number): string {
  const text = [...base, ...labels].map(([key, v]) => `${key}="${escapeLabel(v)}"`).join(',');
  return `${name}${text === '' ? '' : `{${text}}`} ${number(value)}`;
}

/** Label values escape backslash, double quote and line feed. */
export function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function number(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}
