/**
 * The feeder's queue of work: whole-mount reconciles, subtrees and changes heard, and the build's
 * end. It knows what is already queued for a mount (so a change inside a directory about to be
 * listed queues nothing more), drops a mount's work when its lease is lost, and hands out the
 * changes to run ahead of a build.
 */
import type { Provider } from '../core/types.js';
import { isChange, type Change, type Task } from './feeder-types.js';

export class TaskQueue {
  private readonly tasks: Task[] = [];

  get length(): number {
    return this.tasks.length;
  }

  push(task: Task): void {
    this.tasks.push(task);
  }

  shift(): Task | undefined {
    return this.tasks.shift();
  }

  /**
   * Whether a reconcile of `mount` (or of its subtree `uri`, or of a directory holding it) is already
   * waiting in the queue: it will list `uri` when it runs.
   */
  queued(mount: Provider, uri?: string): boolean {
    return this.tasks.some(
      (t) =>
        t.kind !== 'built' &&
        t.mount === mount &&
        (t.kind === 'reconcile' ||
          (uri !== undefined && t.kind === 'subtree' && (t.uri === uri || holds(t.uri, uri)))),
    );
  }

  /** Drops the queued tasks of `mount` (its lease was lost). */
  forget(mount: Provider): void {
    this.dropWhere((task) => task.kind !== 'built' && task.mount === mount);
  }

  /** Drops every whole-mount reconcile (the index cannot be written: a build would read for nothing). */
  dropReconciles(): void {
    this.dropWhere((task) => task.kind === 'reconcile');
  }

  /** Takes the first change queued that has not yet run ahead of a build. */
  takeChangeAhead(): Change | undefined {
    const at = this.tasks.findIndex((t) => isChange(t) && t.again !== true);
    return at < 0 ? undefined : (this.tasks.splice(at, 1)[0] as Change);
  }

  private dropWhere(drop: (task: Task) => boolean): void {
    for (let i = this.tasks.length - 1; i >= 0; i -= 1)
      if (drop(this.tasks[i]!)) this.tasks.splice(i, 1);
  }
}

/** Whether the container `dir` (its URI ending in '/') holds `uri`. */
const holds = (dir: string, uri: string): boolean =>
  uri.length > dir.length && uri.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
