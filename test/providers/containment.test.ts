// Pins containment: every URI that would reach outside the files provider's root — by `..`, by
// percent-encoded or double-encoded dots and separators, by backslashes, NUL, a foreign file:// host,
// a sibling directory sharing the root's name as a prefix, a symlinked file or parent directory, or
// a symlink swapped while reads run — is answered exactly like a missing file, directly and through
// the Registry. A FIFO inside the root is refused without hanging.
import { execFileSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidUriError, NotFoundError } from '../../src/core/errors.js';
import { Registry } from '../../src/core/registry.js';
import type { Provider, ResourceContents } from '../../src/core/types.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { startRacer } from '../helpers/racer.js';
import {
  ctx,
  expectNotFound,
  fileUri,
  rejection,
  removeDir,
  tempDir,
  walkProvider,
  writeTree,
} from './helpers.js';

const SECRET = 'TOP SECRET: must never be served';
const INSIDE = 'inside content';

let base: string;
let docs: string;
let provider: Provider;
let registry: Registry;
/** The provider's root URI, with a trailing slash. */
let R: string;

beforeAll(async () => {
  base = tempDir('reservoir-containment-');
  docs = join(base, 'docs');
  writeTree(base, {
    'docs/a.txt': INSIDE,
    'docs/sub/b.txt': INSIDE,
    'docs/swing-inside.txt': INSIDE,
    'docs/swing-dir-inside/file.txt': INSIDE,
    'docs-secret/secret.txt': SECRET,
    'docs-public/public.txt': 'public',
    'outside.txt': SECRET,
    'outside-dir/secret.txt': SECRET,
    'outside-dir/file.txt': SECRET,
  });
  symlinkSync(join(base, 'outside.txt'), join(docs, 'link-out.txt'));
  symlinkSync('../outside.txt', join(docs, 'relative-link-out.txt'));
  symlinkSync('../docs-secret/secret.txt', join(docs, 'link-to-sibling.txt'));
  symlinkSync(join(base, 'outside-dir'), join(docs, 'linkdir'));
  symlinkSync('../docs-secret', join(docs, 'link-to-sibling-dir'));
  execFileSync('mkfifo', [join(docs, 'fifo')]);
  provider = await filesProvider({ root: docs });
  R = provider.root;
  registry = new Registry()
    .mount(provider)
    .mount(await filesProvider({ root: join(base, 'docs-public') }));
});

afterAll(() => removeDir(base));

/** Escape attempts, relative to the root URI (which ends with '/'). */
const ESCAPES: [string, (root: string) => string][] = [
  ['a plain .. segment', (r) => `${r}../outside.txt`],
  ['.. after a subdirectory', (r) => `${r}sub/../../outside.txt`],
  ['.. into the prefix-sharing sibling', (r) => `${r}../docs-secret/secret.txt`],
  ['a percent-encoded %2e%2e segment', (r) => `${r}%2e%2e/outside.txt`],
  ['an upper-case %2E%2E segment', (r) => `${r}%2E%2E/outside.txt`],
  ['a mixed .%2e segment', (r) => `${r}.%2e/outside.txt`],
  ['a double-encoded %252e%252e segment', (r) => `${r}%252e%252e/outside.txt`],
  ['an overlong UTF-8 dot %c0%ae%c0%ae', (r) => `${r}%c0%ae%c0%ae/outside.txt`],
  ['an encoded separator %2f', (r) => `${r}..%2foutside.txt`],
  ['an encoded separator %2F', (r) => `${r}..%2Foutside.txt`],
  ['encoded separators all the way', (r) => `${r}sub%2f..%2f..%2foutside.txt`],
  ['a double-encoded separator %252f', (r) => `${r}..%252foutside.txt`],
  ['backslashes ..\\', (r) => `${r}..\\outside.txt`],
  ['backslashes ..\\ after a subdirectory', (r) => `${r}sub\\..\\..\\outside.txt`],
  ['an encoded backslash %5c', (r) => `${r}..%5coutside.txt`],
  ['an encoded backslash %5C', (r) => `${r}..%5Coutside.txt`],
  ['an encoded NUL after a real file name', (r) => `${r}a.txt%00`],
  ['an encoded NUL before an extension', (r) => `${r}a.txt%00.png`],
  ['an encoded NUL then ..', (r) => `${r}%00/../../outside.txt`],
  ['a symlinked file pointing outside (absolute)', (r) => `${r}link-out.txt`],
  ['a symlinked file pointing outside (relative)', (r) => `${r}relative-link-out.txt`],
  ['a symlinked file pointing into the prefix-sharing sibling', (r) => `${r}link-to-sibling.txt`],
  ['a symlinked parent directory pointing outside', (r) => `${r}linkdir/secret.txt`],
  ['a symlinked parent directory, read as a directory', (r) => `${r}linkdir/`],
  [
    'a symlinked directory into the prefix-sharing sibling',
    (r) => `${r}link-to-sibling-dir/secret.txt`,
  ],
  ['a FIFO inside the root', (r) => `${r}fifo`],
];

describe('containment in the files provider', () => {
  it('answers a truly missing file with NotFoundError carrying exactly its URI', async () => {
    await expectNotFound(provider.read(`${R}missing.txt`, ctx()), `${R}missing.txt`);
  });

  for (const [what, build] of ESCAPES) {
    it(`answers ${what} exactly like a missing file`, { timeout: 5000 }, async () => {
      const uri = build(R);
      await expectNotFound(provider.read(uri, ctx()), uri);
    });
  }

  it('answers the prefix-sharing sibling directory (root /x/docs, sibling /x/docs-secret) like a missing file', async () => {
    const uri = fileUri(join(base, 'docs-secret', 'secret.txt'));
    expect(uri.startsWith(R.slice(0, -1))).toBe(true);
    await expectNotFound(provider.read(uri, ctx()), uri);
    await expectNotFound(provider.read(fileUri(join(base, 'docs-secret')), ctx()));
  });

  it('answers a file:// URL with a foreign host like a missing file, even when its path is inside the root', async () => {
    for (const uri of [
      `file://evil${join(docs, 'a.txt')}`,
      `file://evil.example.com${join(docs, 'a.txt')}`,
      `file://127.0.0.1${join(docs, 'a.txt')}`,
    ]) {
      await expectNotFound(provider.read(uri, ctx()), uri);
    }
  });

  it('answers URIs of other schemes like missing files', async () => {
    for (const uri of ['http://example.com/a.txt', `https://x${docs}/a.txt`, 'mem://docs/a.txt']) {
      await expectNotFound(provider.read(uri, ctx()), uri);
    }
  });

  it('still serves the real files, so the refusals above are not blanket failures', async () => {
    for (const rel of ['a.txt', 'sub/b.txt', 'sub/../a.txt', '%61.txt']) {
      const result = await provider.read(`${R}${rel}`, ctx());
      expect((result.contents[0] as { text: string }).text).toBe(INSIDE);
    }
  });

  it(
    'refuses a FIFO without waiting for a writer, and leaves it out of listings',
    { timeout: 5000 },
    async () => {
      const timeout = new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('read of a FIFO hung')), 3000).unref(),
      );
      await expectNotFound(Promise.race([provider.read(`${R}fifo`, ctx()), timeout]), `${R}fifo`);
      const listed = (await walkProvider(provider, 1000)).items.map((i) => i.title);
      expect(listed).not.toContain('fifo');
    },
  );

  it('lists no symlink leading outside the root, and shows none in a directory read', async () => {
    const listed = (await walkProvider(provider, 1000)).items.map((i) => i.title);
    expect(listed).toEqual(['a.txt', 'sub/b.txt', 'swing-dir-inside/file.txt', 'swing-inside.txt']);
    const dir = await provider.read(R, ctx());
    const names = (
      JSON.parse((dir.contents[0] as { text: string }).text) as { name: string }[]
    ).map((c) => c.name);
    expect(names).toEqual(['a.txt', 'sub', 'swing-dir-inside', 'swing-inside.txt']);
  });

  it(
    'never serves the outside file while a symlink and a symlinked directory flip between inside and outside targets',
    { timeout: 15_000 },
    async () => {
      const link = join(docs, 'swing.txt');
      const dirLink = join(docs, 'swing-dir');
      symlinkSync('swing-inside.txt', link);
      symlinkSync('swing-dir-inside', dirLink);
      const racer = startRacer(FLIPPER, {
        link,
        tmp: join(docs, '.swing.tmp'),
        inside: 'swing-inside.txt',
        outside: join(base, 'outside.txt'),
        dirLink,
        dirTmp: join(docs, '.swing-dir.tmp'),
        insideDir: 'swing-dir-inside',
        outsideDir: join(base, 'outside-dir'),
        ms: 1500,
      });
      const seen = { inside: 0, refused: 0, leaked: 0 };
      const targets = [`${R}swing.txt`, `${R}swing-dir/file.txt`];
      try {
        while (racer.running()) {
          for (const uri of targets) {
            try {
              const result = await provider.read(uri, ctx());
              const text = contentText(result.contents[0]!);
              if (text.includes('SECRET')) seen.leaked += 1;
              else if (text === INSIDE) seen.inside += 1;
            } catch (error) {
              if (!(error instanceof NotFoundError)) throw error;
              seen.refused += 1;
            }
          }
          await new Promise((resolve) => setImmediate(resolve));
        }
      } finally {
        await racer.stop();
      }
      expect(await racer.changes).toBeGreaterThan(10);
      expect(seen.leaked).toBe(0);
      expect(seen.inside).toBeGreaterThan(0);
      expect(seen.refused).toBeGreaterThan(0);
    },
  );
});

describe('containment through the Registry', () => {
  for (const [what, build] of ESCAPES) {
    it(`answers ${what} exactly like a missing file`, { timeout: 5000 }, async () => {
      await expectNotFound(registry.read(build(R), ctx()));
    });
  }

  it('answers URIs outside every mounted root like missing files', async () => {
    for (const uri of [
      'file:///etc/passwd',
      'file:///',
      fileUri(join(base, 'outside.txt')),
      fileUri(join(base, 'docs-secret', 'secret.txt')),
      `file://evil${join(docs, 'a.txt')}`,
      'http://example.com/',
      'nope:thing',
    ]) {
      await expectNotFound(registry.read(uri, ctx()), uri);
    }
  });

  it('routes each URI to the mount that owns it, not to one whose root is a mere string prefix', async () => {
    const publicText = await registry.read(fileUri(join(base, 'docs-public', 'public.txt')), ctx());
    expect((publicText.contents[0] as { text: string }).text).toBe('public');
    const docsText = await registry.read(`${R}a.txt`, ctx());
    expect((docsText.contents[0] as { text: string }).text).toBe(INSIDE);
  });

  it('reads a root given without its trailing slash as that root’s directory', async () => {
    const result = await registry.read(R.slice(0, -1), ctx());
    expect(result.contents[0]).toMatchObject({ uri: R, mimeType: 'inode/directory' });
  });

  it('normalises file://localhost/ and file:/ spellings before routing', async () => {
    for (const uri of [
      `file://localhost${join(docs, 'a.txt')}`,
      `file:${join(docs, 'a.txt')}`,
      `FILE://${join(docs, 'a.txt')}`,
    ]) {
      const result = await registry.read(uri, ctx());
      expect(result.contents[0]).toMatchObject({ uri: `${R}a.txt`, text: INSIDE });
    }
  });

  it('refuses a raw control character as an invalid URI, before any routing', async () => {
    const error = await rejection(registry.read(`${R}a.txt\0`, ctx()));
    expect(error).toBeInstanceOf(InvalidUriError);
  });
});

function contentText(content: ResourceContents): string {
  return 'text' in content ? content.text : Buffer.from(content.blob, 'base64').toString('utf8');
}

/** Runs in a worker thread: flips two symlinks (atomically, by rename) until `ms` have passed. */
const FLIPPER = `
const { workerData, parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const d = workerData;
const end = Date.now() + d.ms;
let flips = 0;
while (Date.now() < end) {
  const out = flips % 2 === 1;
  fs.symlinkSync(out ? d.outside : d.inside, d.tmp);
  fs.renameSync(d.tmp, d.link);
  fs.symlinkSync(out ? d.outsideDir : d.insideDir, d.dirTmp);
  fs.renameSync(d.dirTmp, d.dirLink);
  flips += 1;
}
parentPort.postMessage(flips);
`;
