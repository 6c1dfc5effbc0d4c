/** What the feeder reports of its work, what it is given, and the work it queues. */
import type { Logger } from '../core/log.js';
import type {
  CallContext,
  Provider,
  ReadResult,
  ResourceChange,
  ResourceInfo,
} from '../core/types.js';
import type { Segmenter } from './segment.js';

export interface Progress {
  /** Resources examined by the current build (unchanged ones included). */
  done: number;
  /** Resources known so far (grows while the lists are walked). */
  total: number;
  /** Bytes of text indexed by the current build. */
  bytes: number;
  /** Whether a build (a reconcile of every mount) is running. */
  building: boolean;
  startedAt: number;
  /**
   * Set when a write to the index failed (disk full, I/O error, read-only): what the write held is
   * missing, so searches may miss matches until a later build completes. The first failure's code
   * (`SQLITE_FULL`, …) and message.
   */
  partial?: { code: string; message: string };
}

export interface FeederOptions {
  maxFileBytes: number;
  segmenter: Segmenter;
  logger: Logger;
  /**
   * Reads a resource to index it; the source's own read when absent. The server reads through the
   * registry's read layer, so a document is indexed by its Markdown rendition.
   */
  read?: ((mount: Provider, uri: string, ctx: CallContext) => Promise<ReadResult>) | undefined;
  /**
   * The most bytes a resource the read layer renders as text (a PDF, a spreadsheet) may have: its
   * original is not text, so the text cap (`maxFileBytes`) applies to its rendition instead.
   */
  renderedMaxBytes?: ((info: ResourceInfo) => number | undefined) | undefined;
}

export type Task =
  | { kind: 'reconcile'; mount: Provider }
  /**
   * Reconcile only what the mount lists under the container `uri`. `again`: it ran already, ahead of
   * a build (see `Change`), and runs once more in its turn.
   */
  | { kind: 'subtree'; mount: Provider; uri: string; again?: true }
  | { kind: 'changes'; mount: Provider; changes: ResourceChange[]; again?: true }
  /** Queued after the start-up reconciles: the build is over when the queue reaches it. */
  | { kind: 'built' };

/**
 * Work a change heard from a source queues. It is run ahead of a build (a whole mount's reconcile)
 * so a change is indexed within about one batch, and then again in its turn, after the build, so
 * that what the build read before the change cannot be left over it.
 */
export type Change = Extract<Task, { kind: 'subtree' | 'changes' }>;

export const isChange = (task: Task): task is Change =>
  task.kind === 'subtree' || task.kind === 'changes';
