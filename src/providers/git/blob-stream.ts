/**
 * A blob too large to hold, streamed: `git cat-file blob <id>` in a process of its own (so a
 * multi-gigabyte blob never blocks the shared `--batch-command` reader's pipe), its stdout consumed
 * chunk by chunk with the pipe's back-pressure. The consumer keeps what it needs and may stop early:
 * the process is killed as soon as the iteration ends, however it ends. No progress for `stallMs`,
 * or an abort of `signal`, kills it and fails the iteration; a non-zero exit is a GitFailure.
 */
import { spawn } from 'node:child_process';
import { ReservoirError } from '../../core/errors.js';
import { describeSpawnError, gitArgs, GitFailure } from './exec.js';

export interface BlobStreamOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Longest wait for the next chunk, ms. */
  stallMs: number;
  signal?: AbortSignal | undefined;
}

/** The bytes of blob `id` (a full object id), in order, as git writes them. */
export async function* streamBlob(id: string, options: BlobStreamOptions): AsyncGenerator<Buffer> {
  if (!/^[0-9a-f]{40,64}$/.test(id)) throw new Error(`not an object id: ${JSON.stringify(id)}`);
  options.signal?.throwIfAborted();
  const child = spawn('git', gitArgs(['cat-file', 'blob', id]), {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    windowsHide: true,
  });
  let failure: Error | undefined;
  let stderr = '';
  const stop = (error: Error): void => {
    failure ??= error;
    child.kill('SIGKILL');
    child.stdout.destroy();
  };
  const timer = setTimeout(
    () =>
      stop(
        new ReservoirError('timeout', `git sent no data for ${options.stallMs} ms`, {
          data: { limitMs: options.stallMs },
        }),
      ),
    options.stallMs,
  );
  const onAbort = (): void =>
    stop(options.signal?.reason instanceof Error ? options.signal.reason : new Error('aborted'));
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const exited = new Promise<number | null>((resolve) => {
    child.once('error', (error) => {
      failure ??= new GitFailure(describeSpawnError(error), { cause: error });
      resolve(null);
    });
    child.once('close', (code) => resolve(code));
  });
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < 4096) stderr += chunk.toString('utf8');
  });
  let complete = false;
  try {
    try {
      for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
        timer.refresh();
        yield chunk;
      }
    } catch (error) {
      throw failure ?? error;
    }
    const code = await exited;
    if (failure !== undefined) throw failure;
    if (code !== 0)
      throw new GitFailure(stderr.trim().split('\n')[0] || `git exited with code ${String(code)}`);
    complete = true;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    if (!complete) {
      child.kill('SIGKILL');
      child.stdout.destroy();
    }
    child.stderr.destroy();
  }
}
