/**
 * The index writer's thread (see store-client.ts): it owns the write connection of one index file
 * and runs the calls the feeder makes, one at a time in the order they were sent, so a call sees
 * every write sent before it. FTS5's tokenizing, merging and commits then run beside the feeder's
 * reads and walks instead of between them.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { LogFn, Logger } from '../core/log.js';
import { Store } from './store.js';

/** A call from the client: a Store method and its arguments. */
export interface StoreCall {
  id: number;
  method:
    'stored' | 'lastDocId' | 'storedPage' | 'hasText' | 'write' | 'under' | 'keepMounts' | 'close';
  args: unknown[];
}

/** The answer to a call: its result, or how it failed; and what the store has written so far. */
export interface StoreReply {
  id: number;
  result?: unknown;
  failure?: { name: string; message: string; code?: string };
  stats: Store['stats'];
}

/** A line for the server's log, written by the client's logger. */
export interface StoreLog {
  log: { level: 'warn' | 'error'; message: string };
}

const port = parentPort!;
const { file } = workerData as { file: string };

const forward =
  (level: 'warn' | 'error'): LogFn =>
  (first: unknown, second?: unknown) =>
    port.postMessage({
      log: { level, message: typeof first === 'string' ? first : String(second) },
    } satisfies StoreLog);
const noop: LogFn = () => undefined;
const logger: Logger = { error: forward('error'), warn: forward('warn'), info: noop, debug: noop };

let store: Store | undefined;
let opening: unknown;
try {
  store = Store.open(file, logger);
} catch (error) {
  opening = error;
}

function run(call: StoreCall): unknown {
  if (store === undefined) throw opening;
  const [a, b, c, d] = call.args;
  switch (call.method) {
    case 'stored':
      return store.stored(a as string[]);
    case 'lastDocId':
      return store.lastDocId();
    case 'storedPage':
      return store.storedPage(
        a as Parameters<Store['storedPage']>[0],
        b as number,
        c as string | undefined,
        d as number,
      );
    case 'hasText':
      return store.hasText(a as string);
    case 'write':
      return store.write(a as Parameters<Store['write']>[0], b as string[]);
    case 'under':
      return store.under(a as string);
    case 'keepMounts':
      return store.keepMounts(a as string[]);
    case 'close':
      store.close();
      return undefined;
  }
}

port.on('message', (call: StoreCall) => {
  const stats = store?.stats ?? { blobsWritten: 0, docsWritten: 0 };
  try {
    const result = run(call);
    port.postMessage({ id: call.id, result, stats: { ...stats } } satisfies StoreReply);
  } catch (error) {
    const { name, message, code } = error as { name?: string; message?: string; code?: unknown };
    port.postMessage({
      id: call.id,
      failure: {
        name: name ?? 'Error',
        message: message ?? String(error),
        ...(typeof code === 'string' ? { code } : {}),
      },
      stats: { ...stats },
    } satisfies StoreReply);
  }
  if (call.method === 'close') port.close();
});
