// Pins how the files provider answers a file it may not read: UnavailableError ('unavailable',
// reason 'permission denied'), never NotFound and never content; and that an unreadable or
// unsearchable directory never fails the whole listing. As root, chmod 000 does not stop reads, so
// the checks run in a child node process as `nobody` against the built dist/; otherwise they run
// in-process. Also pins that a file deleted between list and read is a plain NotFoundError.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UnavailableError } from '../../src/core/errors.js';
import { filesProvider } from '../../src/providers/files/index.js';
import {
  ctx,
  expectNotFound,
  fileUri,
  removeDir,
  tempDir,
  walkProvider,
  writeTree,
} from './helpers.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const NOBODY = 65_534;
const isRoot = process.getuid?.() === 0;

let base: string;
let root: string;
/** A root holding a directory that can be read (r--) but not entered, with a .gitignore inside. */
let searchless: string;

beforeAll(() => {
  base = tempDir('reservoir-perm-');
  root = join(base, 'root');
  writeTree(root, {
    'readable.txt': 'readable',
    'locked.txt': 'locked content',
    'locked-dir/inner.txt': 'inner',
  });
  chmodSync(base, 0o755);
  chmodSync(root, 0o755);
  chmodSync(join(root, 'readable.txt'), 0o644);
  chmodSync(join(root, 'locked.txt'), 0o000);
  chmodSync(join(root, 'locked-dir'), 0o000);
  searchless = join(base, 'searchless');
  writeTree(searchless, {
    'ok.txt': 'ok',
    'no-x/.gitignore': '*.tmp\n',
    'no-x/f.txt': 'f',
    'z.txt': 'z',
  });
  chmodSync(searchless, 0o755);
  chmodSync(join(searchless, 'no-x'), 0o444);
});

afterAll(() => {
  if (root !== undefined && existsSync(join(root, 'locked-dir')))
    chmodSync(join(root, 'locked-dir'), 0o755);
  if (searchless !== undefined && existsSync(join(searchless, 'no-x')))
    chmodSync(join(searchless, 'no-x'), 0o755);
  removeDir(base);
});

/** The source directories the child imports, through dist/providers/files/index.js. */
const CHILD_SOURCES = ['src/core', 'src/providers/files'];

function staleOutputs(): string[] {
  const stale: string[] = [];
  for (const dir of CHILD_SOURCES) {
    for (const entry of readdirSync(join(REPO, dir), { withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
      const source = join(REPO, dir, entry.name);
      const out = join(REPO, 'dist', relative(join(REPO, 'src'), source)).replace(/\.ts$/, '.js');
      if (!existsSync(out) || statSync(out).mtimeMs < statSync(source).mtimeMs) stale.push(out);
    }
  }
  return stale;
}

/**
 * Rebuilds dist/ when a source the child needs is newer than its output. tsc emits even when some
 * unrelated file fails to type-check, so only outputs still stale afterwards fail the test.
 */
function ensureDistIsFresh(): void {
  if (staleOutputs().length === 0) return;
  const build = spawnSync(
    process.execPath,
    [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
    {
      cwd: REPO,
      encoding: 'utf8',
    },
  );
  const still = staleOutputs();
  if (still.length > 0)
    throw new Error(
      `dist/ is stale (${still.join(', ')}) and the build failed:\n${build.stdout}${build.stderr}`,
    );
}

/** What an unprivileged caller observes: each read's outcome and the listing (or its error). */
interface Observation {
  uid: number;
  reads: Record<string, ObservedRead>;
  list: string[] | { error: string };
}

interface ObservedRead {
  ok?: true;
  text?: string;
  name?: string;
  code?: string;
  message?: string;
  data?: Record<string, unknown>;
}

/** The same observation, as source for the child process (it imports the built provider). */
const CHILD = `
const cfg = JSON.parse(process.env.RESERVOIR_PERM_TEST);
const { filesProvider } = await import(cfg.module);
const provider = await filesProvider({ root: cfg.root });
const signal = new AbortController().signal;
const out = { uid: process.getuid(), reads: {} };
for (const [name, uri] of Object.entries(cfg.uris)) {
  try {
    const result = await provider.read(uri, { signal });
    out.reads[name] = { ok: true, text: result.contents[0].text };
  } catch (error) {
    out.reads[name] = { name: error.name, code: error.code, message: error.message, data: error.data };
  }
}
try {
  out.list = (await provider.list(undefined, 100, { signal })).items.map((item) => item.title);
} catch (error) {
  out.list = { error: String(error && error.message) };
}
await provider.close?.();
process.stdout.write(JSON.stringify(out));
`;

/**
 * Reads `uris` and lists `dir` as an unprivileged user: as `nobody` in a child process when the
 * tests run as root (where chmod 000 stops nothing), in-process otherwise.
 */
async function observeUnprivileged(
  dir: string,
  uris: Record<string, string>,
): Promise<Observation> {
  if (!isRoot) {
    const provider = await filesProvider({ root: dir });
    const out: Observation = { uid: process.getuid?.() ?? -1, reads: {}, list: [] };
    for (const [name, uri] of Object.entries(uris)) {
      try {
        const result = await provider.read(uri, ctx());
        out.reads[name] = { ok: true, text: (result.contents[0] as { text: string }).text };
      } catch (error) {
        const e = error as UnavailableError;
        out.reads[name] = { name: e.name, code: e.code, message: e.message, data: e.data };
      }
    }
    try {
      out.list = (await walkProvider(provider, 100)).items.map((item) => item.title ?? item.name);
    } catch (error) {
      out.list = { error: String((error as Error).message) };
    }
    await provider.close?.();
    return out;
  }
  ensureDistIsFresh();
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', CHILD], {
    uid: NOBODY,
    gid: NOBODY,
    cwd: base,
    encoding: 'utf8',
    timeout: 30_000,
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      RESERVOIR_PERM_TEST: JSON.stringify({
        module: pathToFileURL(join(REPO, 'dist/providers/files/index.js')).href,
        root: dir,
        uris,
      }),
    },
  });
  expect(child.error, String(child.error)).toBeUndefined();
  expect(child.status, child.stderr).toBe(0);
  const out = JSON.parse(child.stdout) as Observation;
  expect(out.uid).toBe(NOBODY);
  return out;
}

describe(`files provider: permission denied (${isRoot ? 'as nobody, in a child process' : 'in-process'})`, () => {
  it(
    'answers a chmod-000 file with UnavailableError (permission denied), and still lists it',
    { timeout: 60_000 },
    async () => {
      const uris = {
        readable: fileUri(join(root, 'readable.txt')),
        locked: fileUri(join(root, 'locked.txt')),
        insideLockedDir: fileUri(join(root, 'locked-dir', 'inner.txt')),
        lockedDir: `${fileUri(join(root, 'locked-dir'))}/`,
      };
      const out = await observeUnprivileged(root, uris);
      expect(out.reads['readable']).toEqual({ ok: true, text: 'readable' });
      expect(out.reads['locked']).toEqual({
        name: 'UnavailableError',
        code: 'unavailable',
        message: `Resource unavailable: ${uris.locked}: permission denied`,
        data: { uri: uris.locked, reason: 'permission denied' },
      });
      for (const key of ['insideLockedDir', 'lockedDir'] as const) {
        expect(out.reads[key], key).toMatchObject({
          code: 'unavailable',
          data: { uri: uris[key], reason: 'permission denied' },
        });
      }
      // The listing completes: the unreadable directory is skipped, the unreadable file still listed.
      expect(out.list).toEqual(['locked.txt', 'readable.txt']);
    },
  );

  it(
    'reads a directory holding an unreadable file and an unreadable directory as a full listing',
    { timeout: 60_000 },
    async () => {
      const rootDir = `${fileUri(root)}/`;
      const out = await observeUnprivileged(root, { rootDir });
      const listing = out.reads['rootDir'];
      expect(listing, JSON.stringify(listing)).toMatchObject({ ok: true });
      const names = (JSON.parse(listing?.text ?? '[]') as { name: string }[]).map((c) => c.name);
      expect(names).toEqual(['locked-dir', 'locked.txt', 'readable.txt']);
    },
  );

  it(
    'lists the rest of the tree when a directory can be read but not entered and holds a .gitignore',
    { timeout: 60_000 },
    async () => {
      const uris = {
        ok: fileUri(join(searchless, 'ok.txt')),
        inside: fileUri(join(searchless, 'no-x', 'f.txt')),
      };
      const out = await observeUnprivileged(searchless, uris);
      expect(out.reads['ok']).toEqual({ ok: true, text: 'ok' });
      expect(out.reads['inside']).toMatchObject({
        code: 'unavailable',
        data: { reason: 'permission denied' },
      });
      expect(out.list).toEqual(['ok.txt', 'z.txt']);
    },
  );
});

describe('files provider: a file deleted between list and read', () => {
  it('answers the read of a listed file deleted since with NotFoundError', async () => {
    const dir = tempDir('reservoir-deleted-');
    try {
      writeTree(dir, { 'gone.txt': 'soon gone', 'kept.txt': 'kept' });
      const provider = await filesProvider({ root: dir });
      const listed = (await walkProvider(provider, 100)).items;
      const gone = listed.find((i) => i.name === 'gone.txt');
      expect(gone).toBeDefined();
      unlinkSync(join(dir, 'gone.txt'));
      await expectNotFound(provider.read(gone!.uri, ctx()), gone!.uri);
      await expect(provider.read(fileUri(join(dir, 'kept.txt')), ctx())).resolves.toBeDefined();
    } finally {
      removeDir(dir);
    }
  });
});
