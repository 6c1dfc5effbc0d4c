// Issue 11, item 7: the files provider judges a path before it opens anything. Through the built
// CLI and the real SDK client, over stdio and HTTP, in both eras:
//   - a symlink to an outside FIFO whose writer is blocked in open(2): reading, listing, reading the
//     directory, completing and subscribing never open it — the writer is still blocked afterwards;
//   - as an unprivileged user (`nobody` via setpriv when the tests run as root), a symlink to an
//     outside file of mode 000, into an outside directory of mode 000, and to an outside file that
//     does not exist answer exactly alike (no errno oracle), while an unreadable file inside the
//     root still says "permission denied" — for reads, and for 2025-era subscribes (judged through an
//     O_PATH handle, providers/files/watch-target.ts);
//   - a file with a second hard link (here: outside the root) is refused unless --allow-hardlinks.
import { spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  constants,
  existsSync,
  linkSync,
  openSync,
  readFileSync,
  symlinkSync,
} from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { listAllPages, TARGETS } from '../helpers/clients.js';
import { dirUri, fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { settle, waitFor } from '../security/harness.js';
import { RUNS_AS_ROOT, serveCli, type Served } from './serve-cli.js';

const isLinux = process.platform === 'linux';

let base: string;
let root: string;
let outside: string;

beforeAll(async () => {
  await ensureBuilt();
  base = makeTempDir('reservoir-check-open-');
  root = join(base, 'root');
  outside = join(base, 'outside');
  writeTree(base, {
    'root/plain.txt': 'plain\n',
    'root/locked-inside.txt': 'locked inside\n',
    'root/hard.txt': 'hard linked\n',
    'outside/locked.txt': 'locked outside\n',
    'outside/locked-dir/x.txt': 'x\n',
  });
  linkSync(join(root, 'hard.txt'), join(outside, 'hard-outside.txt'));
  symlinkSync(join(outside, 'fifo'), join(root, 'to-fifo'));
  symlinkSync('../outside/locked.txt', join(root, 'to-locked.txt'));
  symlinkSync('../outside/missing.txt', join(root, 'to-missing.txt'));
  symlinkSync('../outside/locked-dir/x.txt', join(root, 'to-locked-dir.txt'));
  symlinkSync('../outside/no-dir/x.txt', join(root, 'to-missing-dir.txt'));
  symlinkSync('../outside/locked-dir', join(root, 'out-locked'));
  symlinkSync('../outside/no-dir', join(root, 'out-missing'));
  if (isLinux) execFileSync('mkfifo', [join(outside, 'fifo')]);
  for (const dir of [base, root, outside]) chmodSync(dir, 0o755);
  chmodSync(join(root, 'locked-inside.txt'), 0o000);
  chmodSync(join(outside, 'locked.txt'), 0o000);
  chmodSync(join(outside, 'locked-dir'), 0o000);
});

afterAll(() => {
  if (base !== undefined && existsSync(join(outside, 'locked-dir')))
    chmodSync(join(outside, 'locked-dir'), 0o755);
  removeTree(base);
});

/** A process blocked in open(2) for writing on `fifo`, until a reader opens it. */
function blockedWriter(fifo: string): { child: ChildProcess; blocked(): boolean; release(): void } {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const fs = require('node:fs'); const fd = fs.openSync(${JSON.stringify(fifo)}, 'w'); fs.writeSync(fd, 'payload');`,
    ],
    {
      stdio: 'ignore',
    },
  );
  const wchan = (): string => {
    try {
      return readFileSync(`/proc/${child.pid}/wchan`, 'utf8');
    } catch {
      return 'gone';
    }
  };
  return {
    child,
    blocked: () => child.exitCode === null && wchan() === 'wait_for_partner',
    release: () => {
      // A reader's open releases the writer; then it writes and exits.
      const fd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
      child.once('exit', () => closeSync(fd));
    },
  };
}

/** Paths inside the root that lead outside it — to a locked file or directory, or to nothing. */
const OUTSIDE_ALIASES = [
  'to-locked.txt',
  'to-missing.txt',
  'to-locked-dir.txt',
  'to-missing-dir.txt',
  'out-locked/x.txt',
  'out-missing/x.txt',
  'out-locked/',
];

describe.runIf(isLinux).each(TARGETS)(
  'files: an outside FIFO behind a symlink is never opened ($transport, $era era)',
  (target) => {
    it(
      'leaves the FIFO writer blocked through a read, a list, a directory read, a completion and a subscription',
      { timeout: 30_000 },
      async () => {
        const writer = blockedWriter(join(outside, 'fifo'));
        const exited = new Promise((resolve) => writer.child.once('exit', resolve));
        await waitFor(writer.blocked, 'the writer to block in open(2)');
        const connection = await serveCli(target, { args: [root] });
        try {
          const { client } = connection;
          const linkUri = fileUri(root, 'to-fifo');
          expect((await settle(client.readResource({ uri: linkUri }))).ok).toBe(false);
          expect((await settle(client.readResource({ uri: `${linkUri}?lines=1-` }))).ok).toBe(
            false,
          );
          const listed = (await listAllPages(client)).flatMap((page) =>
            page.resources.map((r) => r.uri),
          );
          expect(listed).toContain(fileUri(root, 'plain.txt'));
          expect(listed).not.toContain(linkUri);
          const children = JSON.parse(
            ((await client.readResource({ uri: dirUri(root) })).contents[0] as { text: string })
              .text,
          ) as { name: string }[];
          expect(children.map((c) => c.name)).not.toContain('to-fifo');
          const completion = await client.complete({
            ref: { type: 'ref/resource', uri: `${dirUri(root)}{+path}` },
            argument: { name: 'path', value: 'to-' },
          });
          expect(completion.completion.values).not.toContain('to-fifo');
          if (target.era === '2025') {
            expect((await settle(client.subscribeResource({ uri: linkUri }))).ok).toBe(false);
          } else {
            const subscription = await client.listen({ resourceSubscriptions: [linkUri] });
            expect(subscription.honoredFilter.resourceSubscriptions ?? []).toEqual([]);
            await subscription.close();
          }
          // Every answer is in: had anything opened the FIFO, the writer would have left open(2).
          expect(writer.blocked()).toBe(true);
        } finally {
          await connection.close();
          writer.release();
          await exited;
        }
      },
    );
  },
);

/** A read's failure with its URI replaced, so different URIs' answers compare. */
async function failure(
  client: Client,
  uri: string,
  how: 'read' | 'subscribe' = 'read',
): Promise<Record<string, unknown>> {
  const outcome = await settle(
    how === 'read' ? client.readResource({ uri }) : client.subscribeResource({ uri }),
  );
  expect(outcome.ok, uri).toBe(false);
  const error = (outcome.ok ? {} : outcome.error) as {
    code?: number;
    message?: string;
    data?: unknown;
  };
  return JSON.parse(
    JSON.stringify({ code: error.code, message: error.message, data: error.data }).replaceAll(
      uri,
      '<uri>',
    ),
  ) as Record<string, unknown>;
}

describe.each(TARGETS)(
  `files: no errno oracle outside the root ($transport, $era era${RUNS_AS_ROOT ? ', as nobody' : ''})`,
  (target) => {
    let client: Client;
    let served: Served | undefined;

    beforeAll(async () => {
      served = await serveCli(target, { args: [root], cwd: base, unprivileged: true });
      client = served.client;
    });

    afterAll(async () => {
      await served?.close();
    });

    it('answers links to an outside mode-000 file, into an outside mode-000 directory, and to outside missing paths exactly like a missing file', async () => {
      const reference = await failure(client, fileUri(root, 'nope.txt'));
      for (const rel of OUTSIDE_ALIASES) {
        expect(await failure(client, fileUri(root, rel)), rel).toEqual(reference);
      }
    });

    it.skipIf(target.era !== '2025')(
      'answers a subscribe to each of them exactly like one to a missing file, and to the unreadable inside file with permission denied',
      async () => {
        const missing = await failure(client, fileUri(root, 'nope.txt'), 'subscribe');
        for (const rel of OUTSIDE_ALIASES) {
          expect(await failure(client, fileUri(root, rel), 'subscribe'), rel).toEqual(missing);
        }
        const inside = await failure(client, fileUri(root, 'locked-inside.txt'), 'subscribe');
        expect(JSON.stringify(inside)).toMatch(/permission denied/);
      },
    );

    it('still says permission denied for an unreadable file inside the root (so the server really runs unprivileged)', async () => {
      const inside = await failure(client, fileUri(root, 'locked-inside.txt'));
      expect(JSON.stringify(inside)).toMatch(/permission denied/);
      expect(inside).not.toEqual(await failure(client, fileUri(root, 'nope.txt')));
    });
  },
);

describe.each(TARGETS)('files: hard links ($transport, $era era)', (target) => {
  it('refuses a file with a second hard link (its inode may lie outside the root) like a missing file, and leaves it out of lists', async () => {
    const connection = await serveCli(target, { args: [root] });
    try {
      const { client } = connection;
      const uri = fileUri(root, 'hard.txt');
      const reference = await failure(client, fileUri(root, 'nope.txt'));
      expect(await failure(client, uri)).toEqual(reference);
      expect(await failure(client, `${uri}?lines=1-`)).toMatchObject({ code: reference['code'] });
      const listed = (await listAllPages(client)).flatMap((page) =>
        page.resources.map((r) => r.uri),
      );
      expect(listed).toContain(fileUri(root, 'plain.txt'));
      expect(listed).not.toContain(uri);
    } finally {
      await connection.close();
    }
  });

  it('serves it with --allow-hardlinks', async () => {
    const connection = await serveCli(target, { args: [root, '--allow-hardlinks'] });
    try {
      const { client } = connection;
      const uri = fileUri(root, 'hard.txt');
      expect((await client.readResource({ uri })).contents[0]).toMatchObject({
        uri,
        text: 'hard linked\n',
      });
      const listed = (await listAllPages(client)).flatMap((page) =>
        page.resources.map((r) => r.uri),
      );
      expect(listed).toContain(uri);
    } finally {
      await connection.close();
    }
  });
});
