/** Types for bench/lib/compare.mjs (the bench is plain ESM JavaScript; the unit test is TypeScript). */
export interface BenchRow {
  section: string;
  name: string;
  reads?: number;
  cpuUs?: number;
  p99?: number;
}
export interface SavedRun {
  format: string;
  rows: BenchRow[];
  [meta: string]: unknown;
}
export interface RowRatio {
  section: string;
  name: string;
  missing?: true;
  reads?: number;
  cpuUs?: number;
  p99?: number;
}
export declare const FORMAT: string;
export declare function savedRun(rows: BenchRow[], meta?: Record<string, unknown>): SavedRun;
export declare function loadRun(path: string): SavedRun;
export declare function parseRun(doc: unknown, label?: string): SavedRun;
export declare function writeRun(
  path: string,
  rows: BenchRow[],
  meta?: Record<string, unknown>,
): void;
export declare function compareRuns(
  current: BenchRow[],
  saved: SavedRun,
): { rows: RowRatio[]; gone: Array<{ section: string; name: string }> };
