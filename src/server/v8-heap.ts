/**
 * The process's side of the idle memory reducer (idle-memory.ts): its heap, measured and released
 * through V8's own `gc` function, and unref'd timers (a pending reduction never keeps a process
 * alive).
 *
 * Which collection gives memory back depends on V8 (measured in docs/benchmarks.md, "Memory after a
 * burst"): from V8 12 (Node 22) a "last resort" full GC shrinks the young generation and the old
 * generation's pages whatever the allocation rate was; V8 11 (Node 20) has no such flavour — an
 * options object there means a scavenge — so two full GCs release old-generation pages and the
 * scavenge after them shrinks the young generation, which V8 does when the allocation rate over its
 * last 5 s is low: after the quiet period. Two, because a burst often ends with V8's incremental
 * marking under way: a `gc()` then finishes that cycle, whose marks and compaction candidates were
 * chosen while the burst's garbage was live, and the pages it fragmented stay committed (a 1M-object
 * listing: old space 55 MB holding 17.5 MB live); the second starts from the settled heap and
 * compacts them (21 MB).
 */
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { IdleMemoryHost } from './idle-memory.js';

type GcOptions = { type: 'major' | 'minor'; execution: 'sync'; flavor?: 'last-resort' };
type Gc = (options?: boolean | GcOptions) => void;

let gcFunction: Gc | undefined;

/** V8's `gc`: the global one when the process was started with --expose-gc, else one made now. */
function v8Gc(): Gc {
  const global = (globalThis as { gc?: unknown }).gc;
  if (typeof global === 'function') return global as Gc;
  if (gcFunction === undefined) {
    // A context made while --expose-gc is on gets V8's `gc` as a global; the flag goes back off
    // at once, so no other context (vm, a worker's) sees one.
    setFlagsFromString('--expose-gc');
    try {
      gcFunction = runInNewContext('gc') as Gc;
    } finally {
      setFlagsFromString('--no-expose-gc');
    }
  }
  return gcFunction;
}

const V8_MAJOR = Number(process.versions.v8.split('.')[0]);

/**
 * How far the old generation may grow past what the last full GC left live before the next one:
 * ×2 (V8's `--heap-growing-percent`, read at every limit it computes, so it applies when set at run
 * time). V8's own factor for a heap as large as a server's may reach ×4, and paging promotes garbage
 * steadily (a page's items outlive the scavenges its turns span; retired directory snapshots), so
 * a listing of 100,000 files left 78 MB of old generation committed over 30 MB live; at ×2 the
 * process's peak fell from 177 to 139 MB (Node 20) at the same CPU within the noise (docs/benchmarks.md,
 * "Heap growth while paging").
 */
const OLD_GENERATION_GROWTH_PERCENT = 100;
let growthBounded = false;

/** Bounds the old generation's growth between full GCs (see OLD_GENERATION_GROWTH_PERCENT); once per process. */
export function boundHeapGrowth(): void {
  if (growthBounded) return;
  growthBounded = true;
  setFlagsFromString(`--heap-growing-percent=${OLD_GENERATION_GROWTH_PERCENT}`);
}

/** Collects so that V8 returns the memory a burst left committed (see the module comment). */
export function releaseHeap(): void {
  const gc = v8Gc();
  if (V8_MAJOR >= 12) {
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  } else {
    gc();
    gc();
    gc(true);
  }
}

/** The running process as the reducer's host. */
export const processHeap: IdleMemoryHost = {
  heldBytes() {
    const heap = getHeapStatistics();
    return heap.total_heap_size + heap.external_memory;
  },
  release: releaseHeap,
  bound: boundHeapGrowth,
  after(ms, tick) {
    return setTimeout(tick, ms).unref();
  },
  cancel(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};
