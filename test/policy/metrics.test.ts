// Pins the metrics text: it parses as Prometheus exposition format line by line (HELP and TYPE
// before each family's samples, escaped label values read back exactly), and the values add up —
// requests by method and outcome, errors by code, cumulative histogram buckets, bytes, gauges.
import { describe, expect, it } from 'vitest';
import { createMetrics, LATENCY_BUCKETS_SECONDS } from '../../src/policy/metrics.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
interface Family {
  help: string;
  type: string;
  samples: Sample[];
}

/** A small parser for the text format; throws on any line it does not understand. */
function parse(text: string): Map<string, Family> {
  expect(text.endsWith('\n')).toBe(true);
  const families = new Map<string, Family>();
  let current: string | undefined;
  for (const line of text.slice(0, -1).split('\n')) {
    const comment = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (comment) {
      const [, kind, name = '', rest = ''] = comment;
      const family = families.get(name) ?? { help: '', type: '', samples: [] };
      if (kind === 'HELP')
        family.help = rest.replace(/\\(\\|n)/g, (_, c: string) => (c === 'n' ? '\n' : '\\'));
      else family.type = rest;
      families.set(name, family);
      current = name;
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample) throw new Error(`unparseable line: ${JSON.stringify(line)}`);
    const [, name = '', labelText, valueText = ''] = sample;
    const labels: Record<string, string> = {};
    if (labelText !== undefined) {
      const pair = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/y;
      while (pair.lastIndex < labelText.length) {
        const match = pair.exec(labelText);
        if (!match) throw new Error(`bad labels: ${labelText}`);
        labels[match[1] ?? ''] = (match[2] ?? '').replace(/\\([\\"n])/g, (_, c: string) =>
          c === 'n' ? '\n' : c,
        );
      }
    }
    const family = current === undefined ? undefined : families.get(current);
    if (family === undefined || !name.startsWith(current ?? ''))
      throw new Error(`sample ${name} outside its family`);
    const value = valueText === '+Inf' ? Infinity : Number(valueText);
    if (Number.isNaN(value) && valueText !== 'NaN') throw new Error(`bad value ${valueText}`);
    family.samples.push({ name, labels, value });
  }
  return families;
}

function family(families: Map<string, Family>, name: string): Family {
  const found = families.get(name);
  if (found === undefined) throw new Error(`no family ${name}`);
  return found;
}

describe('createMetrics', () => {
  it('renders counters, a histogram and gauges whose values add up', () => {
    const metrics = createMetrics();
    let subscriptions = 3;
    metrics.gauge(
      'reservoir_active_subscriptions',
      'Resources with at least one subscriber.',
      () => subscriptions,
    );
    const durations = [1, 4, 20, 300, 20_000];
    for (const durationMs of durations)
      metrics.observe({ method: 'resources/read', outcome: 'ok', bytes: 100, durationMs });
    metrics.observe({
      method: 'resources/read',
      outcome: 'error',
      code: 'too_large',
      durationMs: 2,
    });
    metrics.observe({
      method: 'tools/call',
      outcome: 'error',
      code: 'limit_exceeded',
      durationMs: 0.5,
    });
    metrics.observe({
      method: 'tools/call',
      outcome: 'error',
      code: 'limit_exceeded',
      durationMs: 0.5,
    });
    metrics.observe({ method: 'resources/list', outcome: 'error', durationMs: 7 });

    const families = parse(metrics.render());
    const requests = family(families, 'reservoir_requests_total');
    expect(requests.type).toBe('counter');
    const count = (method: string, outcome: string): number | undefined =>
      requests.samples.find((s) => s.labels.method === method && s.labels.outcome === outcome)
        ?.value;
    expect([
      count('resources/read', 'ok'),
      count('resources/read', 'error'),
      count('tools/call', 'error'),
      count('resources/list', 'error'),
    ]).toEqual([5, 1, 2, 1]);
    expect(requests.samples.reduce((sum, s) => sum + s.value, 0)).toBe(9);

    const errors = family(families, 'reservoir_errors_total');
    expect(Object.fromEntries(errors.samples.map((s) => [s.labels.code, s.value]))).toEqual({
      too_large: 1,
      limit_exceeded: 2,
      internal: 1,
    });

    const latency = family(families, 'reservoir_request_duration_seconds');
    expect(latency.type).toBe('histogram');
    const reads = latency.samples.filter((s) => s.labels.method === 'resources/read');
    const buckets = reads.filter((s) => s.name.endsWith('_bucket'));
    expect(buckets.map((s) => s.labels.le)).toEqual([
      ...LATENCY_BUCKETS_SECONDS.map(String),
      '+Inf',
    ]);
    const cumulative = buckets.map((s) => s.value);
    expect(cumulative).toEqual([...cumulative].sort((a, b) => a - b));
    const le = (bound: string): number | undefined =>
      buckets.find((s) => s.labels.le === bound)?.value;
    expect([le('0.005'), le('0.025'), le('0.25'), le('0.5'), le('10'), le('+Inf')]).toEqual([
      3, 4, 4, 5, 5, 6,
    ]);
    expect(reads.find((s) => s.name.endsWith('_count'))?.value).toBe(6);
    expect(reads.find((s) => s.name.endsWith('_sum'))?.value).toBeCloseTo(
      (1 + 4 + 20 + 300 + 20_000 + 2) / 1000,
      9,
    );

    expect(family(families, 'reservoir_read_bytes_total').samples).toEqual([
      { name: 'reservoir_read_bytes_total', labels: {}, value: 500 },
    ]);
    const gauge = family(families, 'reservoir_active_subscriptions');
    expect(gauge).toEqual({
      help: 'Resources with at least one subscriber.',
      type: 'gauge',
      samples: [{ name: 'reservoir_active_subscriptions', labels: {}, value: 3 }],
    });
    subscriptions = 7;
    expect(
      family(parse(metrics.render()), 'reservoir_active_subscriptions').samples[0]?.value,
    ).toBe(7);
  });

  it('escapes label values and help text so they read back exactly', () => {
    const metrics = createMetrics();
    const odd = 'we\\ird "method"\nname';
    metrics.observe({ method: odd, outcome: 'error', code: 'a"b\\c', durationMs: 1 });
    metrics.gauge('odd_help', 'back\\slash and\nnewline', () => 1);
    const text = metrics.render();
    expect(text.split('\n').filter((line) => line.startsWith('reservoir_requests_total'))).toEqual([
      'reservoir_requests_total{method="we\\\\ird \\"method\\"\\nname",outcome="error"} 1',
    ]);
    const families = parse(text);
    expect(family(families, 'reservoir_requests_total').samples[0]?.labels.method).toBe(odd);
    expect(family(families, 'reservoir_errors_total').samples[0]?.labels.code).toBe('a"b\\c');
    expect(family(families, 'odd_help').help).toBe('back\\slash and\nnewline');
  });

  it('renders every family with no operations yet', () => {
    const families = parse(createMetrics().render());
    expect([...families.keys()]).toEqual([
      'reservoir_requests_total',
      'reservoir_errors_total',
      'reservoir_request_duration_seconds',
      'reservoir_read_bytes_total',
      'reservoir_auth_failures_total',
    ]);
    expect(family(families, 'reservoir_read_bytes_total').samples[0]?.value).toBe(0);
  });

  it('refuses bad or duplicate gauge names, and leaves out a gauge whose callback throws', () => {
    const metrics = createMetrics();
    expect(() => metrics.gauge('bad name', 'x', () => 1)).toThrow(RangeError);
    expect(() => metrics.gauge('reservoir_requests_total', 'x', () => 1)).toThrow(
      /already registered/,
    );
    metrics.gauge('flaky', 'Throws.', () => {
      throw new Error('source down');
    });
    expect(() => metrics.gauge('flaky', 'again', () => 1)).toThrow(/already registered/);
    expect(family(parse(metrics.render()), 'flaky').samples).toEqual([]);
  });

  it('folds label sets beyond its series limit into _other, keeping the totals right', () => {
    const metrics = createMetrics();
    for (let i = 0; i < 1200; i += 1)
      metrics.observe({ method: `m${i}`, outcome: 'ok', durationMs: 1 });
    const requests = family(parse(metrics.render()), 'reservoir_requests_total');
    expect(requests.samples).toHaveLength(1001);
    expect(requests.samples.find((s) => s.labels.method === '_other')?.value).toBe(200);
    expect(requests.samples.reduce((sum, s) => sum + s.value, 0)).toBe(1200);
  });
});
