/**
 * `--save FILE` and `--compare FILE`: a run's rows as JSON, and each row's ratio against a saved
 * earlier run. A row is { section, name, reads, cpuUs, p99 } (any of the figures may be missing);
 * rows are matched by section + name. Ratios are now ÷ then: > 1 means more reads/s, more CPU per
 * request, a longer p99 than the saved run.
 */
import { readFileSync, writeFileSync } from 'node:fs';

export const FORMAT = 'reservoir-bench-rows/1';

/** The JSON document `--save` writes. */
export function savedRun(rows, meta = {}) {
  return {
    format: FORMAT,
    ...meta,
    rows: rows.map(({ section, name, reads, cpuUs, p99 }) => ({
      section,
      name,
      reads,
      cpuUs,
      p99,
    })),
  };
}

/** Reads and checks a file written by `--save`; throws a clear error otherwise. */
export function loadRun(path) {
  let doc;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`--compare ${path}: cannot read a saved run (${error.message})`);
  }
  return parseRun(doc, path);
}

/** Validates a parsed saved run. */
export function parseRun(doc, label = 'saved run') {
  if (
    doc === null ||
    typeof doc !== 'object' ||
    doc.format !== FORMAT ||
    !Array.isArray(doc.rows)
  ) {
    throw new Error(
      `${label}: not a bench run saved with --save (expected format '${FORMAT}' and a rows array)`,
    );
  }
  for (const [i, row] of doc.rows.entries()) {
    if (typeof row?.section !== 'string' || typeof row?.name !== 'string')
      throw new Error(`${label}: row ${i} has no section/name`);
  }
  return doc;
}

export function writeRun(path, rows, meta) {
  writeFileSync(path, JSON.stringify(savedRun(rows, meta), null, 2) + '\n');
}

const ratio = (now, then) =>
  Number.isFinite(now) && Number.isFinite(then) && then > 0 ? now / then : NaN;

/**
 * One entry per current row: { section, name, reads, cpuUs, p99 } as now ÷ then ratios (NaN where
 * either side lacks the figure), `missing: true` when the saved run has no such row. Saved rows
 * the current run lacks (in sections it did measure) are returned as `gone`.
 */
export function compareRuns(current, saved) {
  const key = (r) => `${r.section}\u0000${r.name}`;
  const before = new Map(saved.rows.map((r) => [key(r), r]));
  const rows = current.map((r) => {
    const then = before.get(key(r));
    if (then === undefined) return { section: r.section, name: r.name, missing: true };
    return {
      section: r.section,
      name: r.name,
      reads: ratio(r.reads, then.reads),
      cpuUs: ratio(r.cpuUs, then.cpuUs),
      p99: ratio(r.p99, then.p99),
    };
  });
  const seen = new Set(current.map(key));
  const sections = new Set(current.map((r) => r.section));
  // Only sections this run measured: a run with --only read says nothing about the http rows.
  const gone = saved.rows
    .filter((r) => sections.has(r.section) && !seen.has(key(r)))
    .map((r) => ({ section: r.section, name: r.name }));
  return { rows, gone };
}
