/**
 * Small statistics and formatting helpers for the bench: percentiles over latency samples,
 * medians over repetitions, number formatting and a plain-text table printer.
 */

/** Percentile (0-100) of an array of numbers, nearest-rank on a sorted copy. */
export function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export function median(values) {
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return NaN;
  const sorted = [...finite].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function fmtInt(n) {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '—';
}

export function fmtMs(ms, digits) {
  if (!Number.isFinite(ms)) return '—';
  const d = digits ?? (ms < 10 ? 3 : ms < 100 ? 1 : 0);
  return `${ms.toFixed(d)} ms`;
}

export function fmtMB(bytes) {
  return Number.isFinite(bytes) ? `${(bytes / (1024 * 1024)).toFixed(1)} MB` : '—';
}

export function fmtRatio(a, b) {
  return Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)}×` : '—';
}

/** Prints rows (arrays of cells) under a header, columns padded; numbers-like cells right-aligned. */
export function printTable(title, header, rows) {
  const all = [header, ...rows].map((r) => r.map((c) => String(c ?? '')));
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const numeric = (s) => /^[-+]?[\d,.]+(\s?(ms|MB|×|%|\/s|B))?$|^—$/.test(s);
  const line = (r) =>
    r.map((c, i) => (i > 0 && numeric(c) ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ');
  console.log(`\n${title}`);
  console.log(line(all[0]));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of all.slice(1)) console.log(line(r));
}

/** "min / median / max" of repetitions, formatted with `fmt`. */
export function fmtSpread(values, fmt = fmtInt) {
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return '—';
  if (finite.length === 1) return fmt(finite[0]);
  return `${fmt(Math.min(...finite))} / ${fmt(median(finite))} / ${fmt(Math.max(...finite))}`;
}

export function fmtUs(us) {
  return Number.isFinite(us) ? `${us.toFixed(us < 100 ? 1 : 0)} µs` : '—';
}
