// Pins the files provider's templates through a real Registry and the server's template engine:
// the two templates per root (line range first, so it is matched before `{+path}`), plain reads
// through `{+path}`, line ranges at both ends and past them, every malformed `lines` value, binary
// files and directories refused, the read cap on slices (TooLargeError with the slice's size), a
// 2 GB sparse file sliced without being loaded, queries and fragments never silently dropped, and
// containment (`..`, encoded dots and separators, NUL, symlinks out, exclusions) through both
// templates. Also pins the engine itself: it answers exactly what the SDK's UriTemplate answers
// (differential test on random URIs), and a 64 KiB hostile URI against every template answers in
// milliseconds where the SDK's own regular expression takes hundreds.
import {
  closeSync,
  mkdirSync,
  openSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { UriTemplate } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, ReservoirError, TooLargeError } from '../../src/core/errors.js';
import { Registry } from '../../src/core/registry.js';
import type { TextContents } from '../../src/core/types.js';
import { compileLinear } from '../../src/mcp/template-match.js';
import { sdkTemplateEngine } from '../../src/mcp/templates.js';
import { filesProvider, type FilesProvider } from '../../src/providers/files/index.js';
import { parseLineRange as parseLines } from '../../src/providers/utils/ranges.js';
import {
  ctx,
  expectNotFound,
  fileUri,
  rejection,
  removeDir,
  tempDir,
  writeTree,
} from './helpers.js';

const base = tempDir('reservoir-templates-');
const root = join(base, 'root');
const outside = join(base, 'outside');
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
const TEN = Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`).join('');

let registry: Registry;
let provider: FilesProvider;
let rootUri: string;

beforeAll(() => {
  mkdirSync(root);
  mkdirSync(outside);
  writeTree(root, {
    'ten.txt': TEN,
    'no-newline.txt': 'a\nb\nc',
    'crlf.txt': 'one\r\ntwo\r\nthree\r\n',
    'empty.txt': '',
    'unicode.md': 'é\n日本語\n🎉\n',
    'src/core/types.ts': 'export type A = 1;\nexport type B = 2;\n',
    'image.png': PNG,
    blob: Buffer.from('text\0with nul\n'),
    'bad-utf8.txt': Buffer.from([0x61, 0x0a, 0xff, 0xfe, 0x0a]),
    'with space.txt': 'spaced\n',
    'q?mark.txt': 'question\n',
    '.gitignore': 'ignored.txt\nbuild/\n',
    'ignored.txt': 'ignored\n',
    'build/out.js': 'built\n',
    '.git/config': '[core]\n',
    'secret/key.txt': 'excluded\n',
  });
  writeFileSync(join(outside, 'secret.txt'), 'outside\n');
  symlinkSync(join(outside, 'secret.txt'), join(root, 'link-out.txt'));
  symlinkSync(outside, join(root, 'dir-out'));
  symlinkSync(join(root, 'ten.txt'), join(root, 'link-in.txt'));
  provider = filesProvider({ root, exclude: ['secret/'] });
  rootUri = `${fileUri(root)}/`;
  registry = new Registry({ templateEngine: sdkTemplateEngine }).mount(provider);
});

afterAll(async () => {
  await registry.close();
  removeDir(base);
});

const uri = (rel: string, query = ''): string => `${rootUri}${rel}${query}`;

async function readText(target: string): Promise<TextContents> {
  const result = await registry.read(target, ctx());
  expect(result.contents).toHaveLength(1);
  const content = result.contents[0]!;
  if (!('text' in content)) throw new Error(`expected text, got a blob for ${target}`);
  return content;
}

async function lines(rel: string, value: string): Promise<string> {
  return (await readText(uri(rel, `?lines=${value}`))).text;
}

async function invalid(promise: Promise<unknown>, argument: string): Promise<InvalidArgumentError> {
  const error = await rejection(promise);
  expect(error).toBeInstanceOf(InvalidArgumentError);
  expect((error as InvalidArgumentError).data['argument']).toBe(argument);
  return error as InvalidArgumentError;
}

describe('the templates of a files root', () => {
  it('are the line-range template, the byte-range template, then the plain one, all completing path', () => {
    const templates = provider.templates!();
    expect(templates.map((t) => t.uriTemplate)).toEqual([
      `${rootUri}{+path}{?lines}`,
      `${rootUri}{+path}{?bytes}`,
      `${rootUri}{+path}`,
    ]);
    expect(templates.map((t) => t.name)).toEqual(['file-lines', 'file-bytes', 'file']);
    // The range templates read parts through the provider's read; a plain match is that read too.
    expect(templates.map((t) => typeof t.read)).toEqual(['function', 'function', 'undefined']);
    for (const t of templates) {
      expect(Object.keys(t.complete ?? {})).toEqual(['path']);
      expect(t.description).toBeTypeOf('string');
    }
    expect(templates[0]!.description).toMatch(/START-END/);
    expect(templates[0]!.description).toMatch(/1-based and inclusive/);
    expect(templates[0]!.description).toMatch(/last N lines/);
    expect(templates[1]!.description).toMatch(/0-based and inclusive/);
    // Stable: the same objects every call.
    expect(provider.templates!()).toBe(templates);
  });

  it('are listed by the registry', () => {
    expect(registry.listTemplates(undefined).items.map((t) => t.uriTemplate)).toEqual([
      `${rootUri}{+path}{?lines}`,
      `${rootUri}{+path}{?bytes}`,
      `${rootUri}{+path}`,
    ]);
  });

  it('routes a plain URI to the provider read and a ?lines= URI to the line-range template', () => {
    // {+path} has no read of its own, so a plain URI matches no reading template.
    expect(registry.matchTemplate(provider, uri('ten.txt'))).toBeUndefined();
    const ranged = registry.matchTemplate(provider, uri('src/core/types.ts', '?lines=1-2'));
    expect(ranged?.template.name).toBe('file-lines');
    expect(ranged?.variables).toEqual({ path: 'src/core/types.ts', lines: '1-2' });
  });
});

describe('plain reads through {+path}', () => {
  it('read files, percent-encoded names and directories as a plain read does', async () => {
    expect((await readText(uri('ten.txt'))).text).toBe(TEN);
    expect((await readText(uri('with%20space.txt'))).text).toBe('spaced\n');
    expect((await readText(uri('q%3Fmark.txt'))).text).toBe('question\n');
    expect((await readText(uri('src/core/types.ts'))).mimeType).toBe('text/x-typescript');
    const listing = await readText(uri('src/'));
    expect(listing.mimeType).toBe('inode/directory');
    expect(JSON.parse(listing.text)).toEqual([
      { name: 'core', uri: uri('src/core/'), kind: 'directory' },
    ]);
  });

  it('refuse any query or fragment other than one ?lines= or ?bytes= (InvalidArgumentError), never ignore it', async () => {
    for (const [query, argument, reason] of [
      ['?x=1', 'uri', /unknown query parameter 'x'/],
      ['?', 'uri', /empty query/],
      ['#', 'uri', /no fragment/],
      ['#frag', 'uri', /no fragment/],
      ['?lines=1-2&x=1', 'uri', /unknown query parameter 'x'/],
      ['?x=1&lines=1-2', 'uri', /unknown query parameter 'x'/],
      ['?lines=', 'lines', /expected START-END/],
      ['?lines', 'uri', /'lines' has no value/],
      ['?LINES=1-2', 'uri', /unknown query parameter 'LINES'/],
      ['?lines=1-2#f', 'uri', /no fragment/],
      ['?lines=1-2?lines=3-4', 'lines', /expected START-END/],
      ['?lines=1-2&lines=3-4', 'uri', /'lines' is given more than once/],
      ['?bytes=0-1&bytes=2-3', 'uri', /'bytes' is given more than once/],
      ['?lines=1-2&bytes=0-1', 'uri', /one of lines and bytes, not both/],
    ] as const) {
      const error = await invalid(registry.read(uri('ten.txt', query), ctx()), argument);
      expect(error.code).toBe('invalid_argument');
      expect(error.message, query).toMatch(reason);
    }
    // The provider's own read (no template engine) serves and refuses exactly the same.
    for (const query of ['?x=1', '#f'])
      await invalid(provider.read(uri('ten.txt', query), ctx()), 'uri');
    const direct = await provider.read(uri('ten.txt', '?lines=2-2'), ctx());
    expect((direct.contents[0] as TextContents).text).toBe('line 2\n');
  });

  it('refuse a query before touching the disk: a missing or outside file says the same', async () => {
    await invalid(registry.read(uri('no-such-file.txt', '?x=1'), ctx()), 'uri');
    await invalid(registry.read(uri('link-out.txt', '?x=1'), ctx()), 'uri');
  });
});

describe('line ranges', () => {
  it('read START-END inclusively, 1-based, each line with its newline', async () => {
    expect(await lines('ten.txt', '1-1')).toBe('line 1\n');
    expect(await lines('ten.txt', '2-4')).toBe('line 2\nline 3\nline 4\n');
    expect(await lines('ten.txt', '10-10')).toBe('line 10\n');
    expect(await lines('ten.txt', '1-10')).toBe(TEN);
  });

  it('read START- to the end and a lone N as one line', async () => {
    expect(await lines('ten.txt', '1-')).toBe(TEN);
    expect(await lines('ten.txt', '9-')).toBe('line 9\nline 10\n');
    expect(await lines('ten.txt', '10-')).toBe('line 10\n');
    expect(await lines('ten.txt', '5')).toBe('line 5\n');
  });

  it('concatenate back to the file', async () => {
    expect(
      (await lines('ten.txt', '1-3')) +
        (await lines('ten.txt', '4-7')) +
        (await lines('ten.txt', '8-')),
    ).toBe(TEN);
  });

  it('clamp END past the last line, and read START past it as empty text', async () => {
    expect(await lines('ten.txt', '8-1000')).toBe('line 8\nline 9\nline 10\n');
    expect(await lines('ten.txt', '11-')).toBe('');
    expect(await lines('ten.txt', '11-20')).toBe('');
    expect(await lines('ten.txt', '999999999999999-')).toBe('');
    expect(await lines('empty.txt', '1-')).toBe('');
    expect(await lines('empty.txt', '1-1')).toBe('');
  });

  it('count a last line without a newline, and keep CRLF and multibyte text intact', async () => {
    expect(await lines('no-newline.txt', '3-3')).toBe('c');
    expect(await lines('no-newline.txt', '2-')).toBe('b\nc');
    expect(await lines('no-newline.txt', '4-')).toBe('');
    expect(await lines('crlf.txt', '2-2')).toBe('two\r\n');
    expect(await lines('unicode.md', '2-3')).toBe('日本語\n🎉\n');
  });

  it('answer with the requested URI and the file type', async () => {
    const content = await readText(uri('src/core/types.ts', '?lines=2-'));
    expect(content).toEqual({
      uri: uri('src/core/types.ts', '?lines=2-'),
      mimeType: 'text/x-typescript',
      text: 'export type B = 2;\n',
    });
    expect((await readText(uri('with%20space.txt', '?lines=1'))).text).toBe('spaced\n');
    expect((await readText(uri('link-in.txt', '?lines=2-2'))).text).toBe('line 2\n');
  });

  it('accept a percent-encoded value', async () => {
    expect(await lines('ten.txt', '%32-%33')).toBe('line 2\nline 3\n');
  });

  it.each([
    ['0', 'numbered from 1'],
    ['0-3', 'numbered from 1'],
    ['3-0', 'numbered from 1'],
    ['4-2', 'before START'],
    ['-0', 'at least 1'],
    ['-3-5', 'START-END'],
    ['1--5', 'START-END'],
    ['abc', 'START-END'],
    ['1-x', 'START-END'],
    ['1-2-3', 'START-END'],
    ['1.5-2', 'START-END'],
    ['+1-2', 'START-END'],
    ['%201-2', 'START-END'],
    ['1,2', 'START-END'],
    ['1234567890123456-', 'at most 15 digits'],
    ['%ZZ', 'percent-encoding'],
    ['1'.repeat(300), 'longer than 64 characters'],
  ])('refuse lines=%s as an invalid argument', async (value, reason) => {
    const error = await invalid(registry.read(uri('ten.txt', `?lines=${value}`), ctx()), 'lines');
    expect(error.message).toContain(reason);
  });

  it('refuse binary files and directories: they have no lines', async () => {
    expect(
      (await invalid(registry.read(uri('image.png', '?lines=1-'), ctx()), 'lines')).message,
    ).toMatch(/binary file \(image\/png\)/);
    expect(
      (await invalid(registry.read(uri('blob', '?lines=1-1'), ctx()), 'lines')).message,
    ).toMatch(/binary/);
    expect(
      (await invalid(registry.read(uri('bad-utf8.txt', '?lines=1-'), ctx()), 'lines')).message,
    ).toMatch(/binary/);
    expect(
      (await invalid(registry.read(uri('src/', '?lines=1-'), ctx()), 'lines')).message,
    ).toMatch(/directory/);
    // Valid lines of a text file with a bad tail still read.
    expect(await lines('bad-utf8.txt', '1-1')).toBe('a\n');
  });

  it('validate the value before the path, and the path before the disk', async () => {
    await invalid(registry.read(uri('no-such-file.txt', '?lines=0'), ctx()), 'lines');
    await expectNotFound(
      registry.read(uri('no-such-file.txt', '?lines=1-'), ctx()),
      uri('no-such-file.txt', '?lines=1-'),
    );
  });
});

describe('containment through both templates', () => {
  const escapes = (): string[] => [
    `${rootUri}%2e%2e/outside/secret.txt`,
    `${rootUri}%2E%2E/%2E%2E${outside}/secret.txt`,
    `${rootUri}..%2Foutside%2Fsecret.txt`,
    `${rootUri}%2e%2e%2foutside%2fsecret.txt`,
    `${rootUri}..%5C..%5Coutside%5Csecret.txt`,
    `${rootUri}ten.txt%00`,
    `${rootUri}link-out.txt`,
    `${rootUri}dir-out/secret.txt`,
    `${rootUri}ignored.txt`,
    `${rootUri}build/out.js`,
    `${rootUri}.git/config`,
    `${rootUri}secret/key.txt`,
    `${rootUri}missing.txt`,
  ];

  it('refuse escapes and exclusions exactly like a missing file, plain or ranged', async () => {
    for (const target of escapes()) {
      await expectNotFound(registry.read(target, ctx()));
      const ranged = `${target}?lines=1-`;
      // A URI the parser normalises out of this root is routed nowhere: still not found.
      await expectNotFound(registry.read(ranged, ctx()));
    }
  });

  it('normalise a literal .. out of the root before routing (not found, no template involved)', async () => {
    const target = `${rootUri}../outside/secret.txt?lines=1-`;
    const error = await expectNotFound(registry.read(target, ctx()));
    expect(error.data['uri']).toBe(target);
  });

  it('report a refused ranged read under the URI the client sent', async () => {
    const target = uri('link-out.txt', '?lines=1-');
    await expectNotFound(registry.read(target, ctx()), target);
  });
});

describe('the read cap on slices', () => {
  let capped: Registry;
  let small: string;
  const line = `${'x'.repeat(99)}\n`; // 100 bytes a line

  beforeAll(() => {
    small = join(base, 'capped');
    mkdirSync(small);
    writeFileSync(join(small, 'big.txt'), line.repeat(50)); // 5,000 bytes
    capped = new Registry({ templateEngine: sdkTemplateEngine }).mount(
      filesProvider({ root: small, maxReadBytes: 1000 }),
    );
  });
  afterAll(() => capped.close());

  const big = (query = ''): string => `${fileUri(small)}/big.txt${query}`;

  it('lets a slice under the cap through when the whole file is over it', async () => {
    expect(await rejection(capped.read(big(), ctx()))).toBeInstanceOf(TooLargeError);
    const result = await capped.read(big('?lines=41-50'), ctx());
    expect((result.contents[0] as TextContents).text).toBe(line.repeat(10)); // exactly the cap
  });

  it('refuses a slice over the cap with its size and the limit', async () => {
    const bounded = (await rejection(capped.read(big('?lines=1-11'), ctx()))) as TooLargeError;
    expect(bounded).toBeInstanceOf(TooLargeError);
    expect(bounded.data).toMatchObject({ uri: big('?lines=1-11'), size: 1100, limit: 1000 });
    const open = (await rejection(capped.read(big('?lines=3-'), ctx()))) as TooLargeError;
    expect(open).toBeInstanceOf(TooLargeError);
    expect(open.data).toMatchObject({ size: 4800, limit: 1000 });
  });
});

describe('huge files', () => {
  it('slice a 2 GB file without loading it', async () => {
    const dir = join(base, 'huge');
    mkdirSync(dir);
    const file = join(dir, 'huge.log');
    const fd = openSync(file, 'w');
    writeSync(fd, 'first\nsecond\nthird\n');
    closeSync(fd);
    truncateSync(file, 2 * 1024 ** 3); // sparse: the tail is NUL bytes on disk only nominally
    const huge = new Registry({ templateEngine: sdkTemplateEngine }).mount(
      filesProvider({ root: dir }),
    );
    try {
      // Memory, not time, proves the file was not loaded (the time is bench/sections/read.mjs's).
      const before = process.memoryUsage();
      const result = await huge.read(`${fileUri(dir)}/huge.log?lines=2-3`, ctx());
      expect((result.contents[0] as TextContents).text).toBe('second\nthird\n');
      const after = process.memoryUsage();
      expect(after.rss - before.rss).toBeLessThan(256 * 1024 * 1024);
      expect(after.arrayBuffers - before.arrayBuffers).toBeLessThan(64 * 1024 * 1024);
      // The whole file is over the cap: a plain read says so, with its size.
      const error = (await rejection(
        huge.read(`${fileUri(dir)}/huge.log`, ctx()),
      )) as TooLargeError;
      expect(error.data).toMatchObject({ size: 2 * 1024 ** 3 });
    } finally {
      await huge.close();
    }
  });
});

describe('parseLines', () => {
  it('parses the three forms', () => {
    expect(parseLines('3-7')).toEqual({ start: 3, end: 7 });
    expect(parseLines('3-')).toEqual({ start: 3 });
    expect(parseLines('3')).toEqual({ start: 3, end: 3 });
    expect(parseLines('007-010')).toEqual({ start: 7, end: 10 });
    expect(() => parseLines('')).toThrow(InvalidArgumentError);
  });
});

describe('the template engine', () => {
  const TEMPLATES = [
    'file:///r/{+path}',
    'file:///r/{+path}{?lines}',
    'x://{a}/{b}',
    'x://{a*}/z',
    'x://q{/p*}{?a,b}',
    'x://{+a}{+b}',
    'x://{#f}',
    'x://a{.ext}',
    'x://{+a},{b*}',
    'x://{a}{&b*}',
    'x://{x,y}/{+z}?',
    'x://{?q*}',
  ];
  const ALPHABET = [
    'a',
    'b',
    '/',
    ',',
    ',,',
    '?',
    '&',
    '=',
    '.',
    'lines',
    'q',
    'z',
    '#',
    '%',
    'x://',
    'file:///r/',
  ];

  it('answers exactly what the SDK UriTemplate answers (differential, random URIs)', () => {
    let seed = 42;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x80000000;
    };
    let compared = 0;
    for (const template of TEMPLATES) {
      const sdk = new UriTemplate(template);
      const ours = compileLinear(template);
      const prefix = template.startsWith('file:') ? 'file:///r/' : 'x://';
      for (let i = 0; i < 3000; i += 1) {
        let candidate = random() < 0.85 ? prefix : '';
        const length = 1 + Math.floor(random() * 10);
        for (let j = 0; j < length; j += 1)
          candidate += ALPHABET[Math.floor(random() * ALPHABET.length)];
        expect(ours.match(candidate), `${template} ← ${candidate}`).toEqual(sdk.match(candidate));
        compared += 1;
      }
    }
    expect(compared).toBe(TEMPLATES.length * 3000);
  });

  it('extracts RFC 6570 variables like the SDK on ordinary URIs', () => {
    const c = sdkTemplateEngine.compile('file:///r/{+path}{?lines}');
    expect(c.match('file:///r/a/b%20c.txt?lines=1-5')).toEqual({
      path: 'a/b%20c.txt',
      lines: '1-5',
    });
    expect(c.match('file:///r/a/b.txt')).toBeNull();
    expect(sdkTemplateEngine.compile('x://{/p*}').match('x:///a,b')).toEqual({ p: ['a', 'b'] });
    expect(() => sdkTemplateEngine.compile('x://{unclosed')).toThrow();
  });
});

/** URIs of 64 KiB built to make a backtracking matcher work hard against these templates. */
function hostileUris(prefix: string): Record<string, string> {
  const fill = (s: string): string =>
    (prefix + s.repeat(Math.ceil(65_536 / s.length))).slice(0, 65_535);
  return {
    'a/ repeated': fill('a/'),
    '% run': fill('%'),
    '%2e%2e/ repeated': fill('%2e%2e/'),
    '?lines= then & run': `${prefix}x?lines=${'&'.repeat(65_536)}`.slice(0, 65_535),
    '?lines=a repeated, then &': `${fill('?lines=a').slice(0, 65_534)}&`,
    '?lines=1- repeated': fill('?lines=1-'),
    '? run': fill('?'),
    ', run': fill(','),
    '# run': fill('#'),
    '&lines=1 repeated': `${prefix}a?lines=1${'&lines=1'.repeat(8_000)}`.slice(0, 65_535),
  };
}

describe('hostile URIs', () => {
  // How long each takes (ours linear, the SDK's regular expression quadratic on '?lines=a…&') is
  // bench/sections/templates-hostile.mjs's to print; here, what each answers.
  it('the linear engine and the SDK matcher agree that the worst of them matches nothing', () => {
    const hostile = hostileUris('file:///r/')['?lines=a repeated, then &']!;
    expect(new UriTemplate('file:///r/{+path}{?lines}').match(hostile)).toBeNull();
    expect(compileLinear('file:///r/{+path}{?lines}').match(hostile)).toBeNull();
  });

  it('each template answers a 64 KiB hostile URI (a match or none) without throwing', () => {
    for (const template of provider.templates!()) {
      const compiled = sdkTemplateEngine.compile(template.uriTemplate);
      for (const [label, hostile] of Object.entries(hostileUris(rootUri))) {
        expect(() => compiled.match(hostile), `${template.name} ← ${label}`).not.toThrow();
      }
    }
  });

  it('every read of one answers with a not_found, invalid_argument or invalid_uri error, in process', async () => {
    for (const [label, hostile] of Object.entries(hostileUris(rootUri))) {
      const outcome = await registry.read(hostile, ctx()).then(
        () => 'read',
        (error: unknown) => (error instanceof ReservoirError ? error.code : String(error)),
      );
      expect(['not_found', 'invalid_argument', 'invalid_uri'], `${label}: ${outcome}`).toContain(
        outcome,
      );
    }
  });
});
