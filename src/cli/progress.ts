/**
 * Index build progress on stderr: a bar redrawn in place on a terminal (files, bytes, rate, ETA),
 * or a plain line every few seconds otherwise (a log, a CI run), and one summary line at the end.
 */
import type { Progress } from '../search/feeder.js';

const LINE_EVERY_MS = 5000;
const REDRAW_EVERY_MS = 100;

export interface ProgressReporter {
  update(progress: Progress): void;
  finish(progress: Progress, totals: { docs: number; bytes: number }): void;
}

export function progressReporter(
  stream: NodeJS.WriteStream = process.stderr,
  now: () => number = Date.now,
): ProgressReporter {
  const tty = stream.isTTY === true;
  let last = 0;
  return {
    update(progress) {
      const t = now();
      if (t - last < (tty ? REDRAW_EVERY_MS : LINE_EVERY_MS)) return;
      last = t;
      stream.write(tty ? `\r${bar(progress, t)}\u001b[K` : `${line(progress, t)}\n`);
    },
    finish(progress, totals) {
      const seconds = Math.max(0.001, (now() - progress.startedAt) / 1000);
      if (tty) stream.write('\r\u001b[K');
      stream.write(
        `indexed ${count(progress.done)} resources in ${seconds.toFixed(1)} s (${megabytes(progress.bytes)} of text read; ` +
          `the index holds ${count(totals.docs)} resources, ${megabytes(totals.bytes)})\n`,
      );
    },
  };
}

function rate(progress: Progress, at: number): number {
  const seconds = (at - progress.startedAt) / 1000;
  return seconds <= 0 ? 0 : progress.done / seconds;
}

function eta(progress: Progress, at: number): string {
  const perSecond = rate(progress, at);
  if (perSecond <= 0 || progress.total <= progress.done) return '–';
  const seconds = Math.ceil((progress.total - progress.done) / perSecond);
  return seconds >= 60
    ? `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`
    : `${seconds}s`;
}

function bar(progress: Progress, at: number): string {
  const width = 24;
  const fraction = progress.total === 0 ? 0 : Math.min(1, progress.done / progress.total);
  const filled = Math.round(fraction * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${details(progress, at)}`;
}

function line(progress: Progress, at: number): string {
  return `indexing: ${details(progress, at)}`;
}

function details(progress: Progress, at: number): string {
  return `${count(progress.done)}/${count(progress.total)} files, ${megabytes(progress.bytes)}, ${count(Math.round(rate(progress, at)))} files/s, ETA ${eta(progress, at)}`;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

function megabytes(bytes: number): string {
  return bytes < 1e6 ? `${count(bytes)} bytes` : `${(bytes / 1e6).toFixed(1)} MB`;
}
