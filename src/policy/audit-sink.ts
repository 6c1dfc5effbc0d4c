/**
 * Where audit lines go: stderr, or a file rotated by size. A sink receives whole lines and writes
 * each one whole into exactly one file, so rotation neither loses nor tears a line; calls to
 * `write` are serialised by the audit log, never concurrent.
 */
import { mkdir, open, rename, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';

export interface AuditSink {
  /** Writes complete lines, each ending in `\n`. */
  write(lines: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

/** Writes to the process's stderr (the protocol owns stdout over stdio). */
export function stderrSink(): AuditSink {
  return {
    write: (lines) =>
      new Promise<void>((resolve, reject) => {
        process.stderr.write(lines.join(''), (error) => (error ? reject(error) : resolve()));
      }),
    close: async () => undefined,
  };
}

/**
 * Appends to `path`. When a line would take the file past `maxBytes`, the file is renamed to
 * `path.1` (`path.1` to `path.2`, …, the oldest beyond `path.<keep>` is overwritten) and a fresh
 * file is started. A single line longer than `maxBytes` gets a file to itself.
 */
export function fileSink(path: string, maxBytes: number, keep: number): AuditSink {
  let handle: FileHandle | undefined;
  let size = 0;

  const openFile = async (): Promise<FileHandle> => {
    if (handle !== undefined) return handle;
    await mkdir(dirname(path), { recursive: true });
    handle = await open(path, 'a', 0o600);
    size = (await handle.stat()).size;
    return handle;
  };
  const rotate = async (): Promise<void> => {
    await handle?.close();
    handle = undefined;
    for (let i = keep - 1; i >= 1; i -= 1)
      await renameIfPresent(`${path}.${i}`, `${path}.${i + 1}`);
    await renameIfPresent(path, `${path}.1`);
  };

  return {
    async write(lines) {
      let file = await openFile();
      let batch: string[] = [];
      let batchBytes = 0;
      for (const line of lines) {
        const bytes = Buffer.byteLength(line);
        if (size + batchBytes > 0 && size + batchBytes + bytes > maxBytes) {
          if (batch.length > 0) await file.appendFile(batch.join(''));
          batch = [];
          batchBytes = 0;
          await rotate();
          file = await openFile();
        }
        batch.push(line);
        batchBytes += bytes;
      }
      if (batch.length > 0) await file.appendFile(batch.join(''));
      size += batchBytes;
    },
    async close() {
      await handle?.close();
      handle = undefined;
    },
  };
}

async function renameIfPresent(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
