/**
 * Which mounts the feeder hears: each fed mount's change events (or list-changed signal), queued
 * as the feeder's tasks. Where the index is shared, a mount is heard while this instance holds its
 * lease: a lease taken later subscribes it and asks for a catch-up, a lease lost stops hearing it
 * and drops its queued work (another instance feeds it).
 */
import type { Logger } from '../core/log.js';
import type { Provider } from '../core/types.js';
import type { MountLeases } from './backend.js';
import type { Task } from './feeder-types.js';

/** What hearing needs of the feeder's queue. */
export interface FeederQueue {
  /** Queues a task (nothing once closed). */
  enqueue(task: Task): void;
  /** Whether a reconcile of `mount` is already waiting. */
  queued(mount: Provider): boolean;
  /** Drops the queued tasks of `mount`. */
  forget(mount: Provider): void;
  /** Whether the feeder is closed. */
  isClosed(): boolean;
}

export class MountHearing {
  /** How to stop hearing each heard mount's changes, by root. */
  private readonly stops = new Map<string, () => void>();
  private stopLeases: (() => void) | undefined;

  constructor(
    private readonly mounts: readonly Provider[],
    private readonly queue: FeederQueue,
    private readonly logger: Logger,
  ) {}

  /** Follows `leases`: mounts whose lease this instance takes or loses later are heard or dropped. */
  follow(leases: MountLeases): void {
    this.stopLeases = leases.onChange((root, held) => {
      const mount = this.mounts.find((m) => m.root === root);
      if (mount !== undefined) void (held ? this.adopt(mount) : this.drop(mount));
    });
  }

  /** Hears a mount's changes (or that its list changed), queued as tasks. */
  async subscribe(mount: Provider): Promise<void> {
    let stop: (() => void) | undefined;
    if (mount.onChanges !== undefined) {
      stop = await mount.onChanges((changes) =>
        this.queue.enqueue({ kind: 'changes', mount, changes }),
      );
    } else if (mount.onListChanged !== undefined) {
      stop = await mount.onListChanged(() => {
        if (!this.queue.queued(mount)) this.queue.enqueue({ kind: 'reconcile', mount });
      });
    }
    if (stop === undefined) return;
    if (this.queue.isClosed()) return stop();
    this.stops.get(mount.root)?.();
    this.stops.set(mount.root, stop);
  }

  close(): void {
    this.stopLeases?.();
    for (const stop of this.stops.values()) stop();
    this.stops.clear();
  }

  /** This instance took the lease of `mount`: hear it, starting with a catch-up. */
  private async adopt(mount: Provider): Promise<void> {
    if (this.queue.isClosed() || this.stops.has(mount.root)) return;
    await this.subscribe(mount);
    this.logger.info({ source: mount.root }, 'search index: feeding this source (lease taken)');
    if (!this.queue.queued(mount)) this.queue.enqueue({ kind: 'reconcile', mount });
  }

  /** This instance lost the lease of `mount`: stop hearing it (another instance feeds it). */
  private drop(mount: Provider): void {
    this.stops.get(mount.root)?.();
    this.stops.delete(mount.root);
    this.queue.forget(mount);
    this.logger.info(
      { source: mount.root },
      'search index: no longer feeding this source (lease lost)',
    );
  }
}
