import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareRuns, loadRun, parseRun, savedRun, writeRun } from '../../bench/lib/compare.mjs';

describe('bench --save / --compare', () => {
  it('gives each row now ÷ then for reads/s, CPU per request and p99, matched by section and name', () => {
    const saved = savedRun([
      { section: 'read', name: 'Reservoir, 16 in flight', reads: 10_000, cpuUs: 50, p99: 4 },
      {
        section: 'http',
        name: 'Reservoir, 2025-11-25 sessions',
        reads: 4_000,
        cpuUs: 200,
        p99: 20,
      },
    ]);
    const { rows, gone } = compareRuns(
      [
        {
          section: 'http',
          name: 'Reservoir, 2025-11-25 sessions',
          reads: 5_000,
          cpuUs: 150,
          p99: 10,
        },
        { section: 'read', name: 'Reservoir, 16 in flight', reads: 8_000, cpuUs: 60, p99: 4 },
      ],
      saved,
    );
    expect(gone).toEqual([]);
    expect(rows).toEqual([
      {
        section: 'http',
        name: 'Reservoir, 2025-11-25 sessions',
        reads: 1.25,
        cpuUs: 0.75,
        p99: 0.5,
      },
      { section: 'read', name: 'Reservoir, 16 in flight', reads: 0.8, cpuUs: 1.2, p99: 1 },
    ]);
  });

  it('marks rows the saved run lacks as new and lists saved rows this run lacks', () => {
    const saved = savedRun([
      { section: 'read', name: 'old peer', reads: 1_000 },
      { section: 'http', name: 'a section this run did not measure', reads: 1_000 },
    ]);
    const { rows, gone } = compareRuns(
      [{ section: 'read', name: 'no-SDK ceiling', reads: 20_000 }],
      saved,
    );
    expect(rows).toEqual([{ section: 'read', name: 'no-SDK ceiling', missing: true }]);
    expect(gone).toEqual([{ section: 'read', name: 'old peer' }]);
  });

  it('gives no ratio (NaN) where either run lacks the figure or the saved figure is zero', () => {
    const saved = savedRun([{ section: 'http', name: 'row', reads: 0, p99: 5 }]);
    const [row] = compareRuns(
      [{ section: 'http', name: 'row', reads: 100, cpuUs: 40 }],
      saved,
    ).rows;
    expect(Number.isNaN(row?.reads)).toBe(true);
    expect(Number.isNaN(row?.cpuUs)).toBe(true);
    expect(Number.isNaN(row?.p99)).toBe(true);
  });

  it('round-trips a run through --save and reads it back for --compare', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'bench-compare-')), 'run.json');
    writeRun(
      file,
      [{ section: 'read', name: 'Reservoir, 1 in flight', reads: 3_000, cpuUs: 120, p99: 1.5 }],
      { date: '2026-11-23T21:00:00Z' },
    );
    const loaded = loadRun(file);
    expect(loaded.date).toBe('2026-11-23T21:00:00Z');
    expect(loaded.rows).toEqual([
      { section: 'read', name: 'Reservoir, 1 in flight', reads: 3_000, cpuUs: 120, p99: 1.5 },
    ]);
  });

  it('refuses a file that is not a saved run, with a clear error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-compare-'));
    writeFileSync(join(dir, 'bad.json'), '{"rows": 3}');
    writeFileSync(join(dir, 'broken.json'), '{not json');
    expect(() => loadRun(join(dir, 'bad.json'))).toThrow(/not a bench run saved with --save/);
    expect(() => loadRun(join(dir, 'broken.json'))).toThrow(/cannot read a saved run/);
    expect(() => parseRun({ format: 'reservoir-bench-rows/1', rows: [{ name: 'x' }] })).toThrow(
      /row 0 has no section/,
    );
  });
});
