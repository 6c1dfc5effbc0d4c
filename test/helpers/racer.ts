/**
 * A worker thread that changes a tree for a while (swapping links, renaming directories) while a
 * test reads through it, then posts how many changes it made. `running()` is true until it posts or
 * fails; `stop()` waits for it to end and terminates it, whatever happened.
 */
import { Worker } from 'node:worker_threads';

export interface Racer {
  running(): boolean;
  /** How many changes the worker made (rejects with its error). */
  changes: Promise<number>;
  stop(): Promise<void>;
}

/** Starts `source` (the worker's code, evaluated) with `workerData`. */
export function startRacer(source: string, workerData: unknown): Racer {
  const worker = new Worker(source, { eval: true, workerData });
  let finished = false;
  const changes = new Promise<number>((resolve, reject) => {
    worker.once('message', (n: number) => {
      finished = true;
      resolve(n);
    });
    worker.once('error', (error) => {
      finished = true;
      reject(error);
    });
  });
  return {
    running: () => !finished,
    changes,
    async stop() {
      await changes.catch(() => undefined);
      await worker.terminate();
    },
  };
}
