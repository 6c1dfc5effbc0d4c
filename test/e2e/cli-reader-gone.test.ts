// A reader that leaves early (`reservoir list . | head -1`) ends the command quietly: exit code 0,
// nothing on stderr — not an unhandled EPIPE with a stack trace and exit code 1.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CLI_PATH, ensureBuilt } from '../helpers/build.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';

let root: string;

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir();
  // Far more listing than a pipe holds (64 KiB), so the CLI is still writing when the reader leaves.
  const files: Record<string, string> = {};
  for (let i = 0; i < 4_000; i += 1) files[`a-rather-long-file-name-${i}.txt`] = `${i}\n`;
  writeTree(root, files);
});

afterAll(() => removeTree(root));

it('exits 0 with nothing on stderr when its stdout reader closes after the first chunk', async () => {
  const child = spawn(process.execPath, [CLI_PATH, 'list', root], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const [first] = (await once(child.stdout, 'data')) as [Buffer];
  expect(first.toString('utf8')).toContain('file://');
  child.stdout.destroy();
  // 'close', not 'exit': it comes once stderr is read to its end.
  const [code] = (await once(child, 'close')) as [number | null];
  expect(stderr).toBe('');
  expect(code).toBe(0);
});
