// Pins partial reads end to end over a real stdio pipe with the real SDK client, on files and git:
// `?bytes=START-END` round-trips binary content byte for byte (ranges concatenate to the file, at
// any offset of a 3 GiB sparse file and of a git blob over the cap, streamed), `?lines=` and the
// tail `?lines=-N` on a sparse file and a streamed blob, every malformed range a clear -32602, and a
// resource over the cap a -32010 whose message names a concrete ?bytes= (and ?lines=) URI. With the
// read cap raised to 1 GiB, a 512 MiB text file, a 64 MiB binary and a 64 MiB git blob are refused
// from their size before any byte is read: -32010, never -32603, and the server's peak RSS barely moves.
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ProtocolError, type Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup, connectStdio } from '../helpers/clients.js';
import { dirUri, fileUri, makeTempDir, removeTree, sha256 } from '../helpers/tree.js';
import { makeRepo, repoName } from '../providers/git-helpers.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const cleanup = new Cleanup();
let root: string;
let repo: string;
let small: Buffer;
let blob: Buffer;
let bigText: string;
const TAIL_TEXT = 'tail line 1\ntail line 2\ntail line 3\n';

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir();
  cleanup.add(() => removeTree(root));
  small = randomBytes(300_000);
  writeFileSync(join(root, 'small.bin'), small);
  // 3 GiB, sparse: a random head, a random island at 2.5 GiB, text at the very end.
  const huge = join(root, 'huge.bin');
  writeFileSync(huge, small.subarray(0, 1000));
  truncateSync(huge, 3 * GiB);
  const island = openSync(huge, 'r+');
  writeSync(island, small, 0, 4096, 2.5 * GiB);
  closeSync(island);
  const log = join(root, 'huge.log');
  writeFileSync(log, 'first\n');
  const fd = openSync(log, 'r+');
  writeSync(fd, `\n${TAIL_TEXT}`, 3 * GiB);
  closeSync(fd);
  // A git blob over the cap, streamed: 3 MB of numbered lines, and a random binary.
  bigText = Array.from(
    { length: 250_000 },
    (_, i) => `line ${String(i + 1).padStart(6, '0')}\n`,
  ).join('');
  blob = randomBytes(3 * MiB);
  repo = makeRepo({ 'big.txt': bigText, 'big.bin': blob, 'small.txt': 'a\nb\nc\n' });
  cleanup.add(() => removeTree(repo));
}, 120_000);

afterAll(() => cleanup.run());

/** A config file serving `files` and the repository `gitPath`, both with the read cap `cap`. */
function config(files: string, gitPath: string, cap: number): string {
  const path = join(makeTempDir('reservoir-config-'), 'reservoir.yaml');
  cleanup.add(() => removeTree(dirname(path)));
  writeFileSync(
    path,
    [
      'sources:',
      `  - { type: files, root: ${JSON.stringify(files)}, maxReadBytes: ${cap} }`,
      `  - { type: git, path: ${JSON.stringify(gitPath)}, maxReadBytes: ${cap} }`,
      '',
    ].join('\n'),
  );
  return path;
}

async function failure(client: Client, uri: string): Promise<ProtocolError> {
  const error: unknown = await client.readResource({ uri }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, uri).toBeInstanceOf(ProtocolError);
  return error as ProtocolError;
}

async function bytesOf(client: Client, uri: string): Promise<Buffer> {
  const content = (await client.readResource({ uri })).contents[0]!;
  return 'blob' in content ? Buffer.from(content.blob, 'base64') : Buffer.from(content.text);
}

async function textOf(client: Client, uri: string): Promise<string> {
  const content = (await client.readResource({ uri })).contents[0]!;
  if (!('text' in content)) throw new Error(`expected text for ${uri}`);
  return content.text;
}

describe('partial reads over stdio, with a 1 MiB read cap', () => {
  let client: Client;
  let git: string;

  beforeAll(async () => {
    ({ client } = await connectStdio('2025', [], ['--config', config(root, repo, MiB)], cleanup));
    git = `git://${repoName(repo)}/main/`;
  });

  it('lists the range templates with descriptions, before the plain ones', async () => {
    const { resourceTemplates } = await client.listResourceTemplates();
    const byName = new Map(resourceTemplates.map((t) => [t.uriTemplate, t]));
    const filesRoot = dirUri(root);
    for (const template of [
      `${filesRoot}{+path}{?bytes}`,
      `${filesRoot}{+path}{?lines}`,
      `git://${repoName(repo)}/{ref}/{+path}{?bytes}`,
      `git://${repoName(repo)}/{ref}/{+path}{?lines}`,
    ])
      expect(byName.get(template)?.description, template).toMatch(/START-END/);
  });

  it('reads a binary file in byte ranges that concatenate to it, byte for byte', async () => {
    const uri = fileUri(root, 'small.bin');
    const parts = [
      await bytesOf(client, `${uri}?bytes=0-99999`),
      await bytesOf(client, `${uri}?bytes=100000-199999`),
      await bytesOf(client, `${uri}?bytes=200000-`),
    ];
    expect(sha256(Buffer.concat(parts))).toBe(sha256(small));
    // END past the end is clamped.
    expect(await bytesOf(client, `${uri}?bytes=299990-999999`)).toEqual(small.subarray(299_990));
  });

  it('reads any offset of a 3 GiB sparse file, and refuses it whole with the ranges to use', async () => {
    const uri = fileUri(root, 'huge.bin');
    expect(await bytesOf(client, `${uri}?bytes=0-999`)).toEqual(small.subarray(0, 1000));
    const island = 2.5 * GiB;
    expect(await bytesOf(client, `${uri}?bytes=${island - 10}-${island + 4095}`)).toEqual(
      Buffer.concat([Buffer.alloc(10), small.subarray(0, 4096)]),
    );
    const end = await bytesOf(client, `${uri}?bytes=${3 * GiB - 5}-`);
    expect(end).toEqual(Buffer.alloc(5));
    const error = await failure(client, uri);
    expect(error.code).toBe(-32010);
    expect(error.data).toMatchObject({ size: 3 * GiB, limit: MiB, measure: 'size' });
    expect(error.message).toContain(`${uri}?bytes=0-${MiB - 1}`);
  });

  it('reads the last lines of a 3 GiB sparse log, and its first', async () => {
    const uri = fileUri(root, 'huge.log');
    expect(await textOf(client, `${uri}?lines=-3`)).toBe(TAIL_TEXT);
    expect(await textOf(client, `${uri}?lines=-1`)).toBe('tail line 3\n');
    expect(await textOf(client, `${uri}?lines=1-1`)).toBe('first\n');
    const error = await failure(client, uri);
    expect(error.code).toBe(-32010);
    expect(error.message).toContain(`${uri}?lines=1-1000`);
  });

  it.each([
    ['?bytes=10-5', 'bytes', /END \(5\) is before START \(10\)/],
    ['?bytes=-5', 'bytes', /not negative/],
    ['?bytes=abc', 'bytes', /expected START-END/],
    ['?bytes=1.5-2', 'bytes', /expected START-END/],
    ['?bytes=0-1234567890123456', 'bytes', /at most 15 digits/],
    ['?bytes=300000-300001', 'bytes', /past the last byte \(299999\) of this 300000-byte/],
    ['?bytes=0-1&bytes=2-3', 'uri', /'bytes' is given more than once/],
    ['?bytes=0-1&lines=1-2', 'uri', /one of bytes and lines, not both/],
    ['?bytes=0-1&x=1', 'uri', /unknown query parameter 'x'/],
    ['?lines=-0', 'lines', /at least 1/],
    ['?lines=5-1', 'lines', /before START/],
  ])('answers %s with a clear -32602', async (query, argument, reason) => {
    for (const base of [fileUri(root, 'small.bin'), `${git}big.bin`]) {
      const target =
        base.endsWith('small.bin') || !query.includes('300000')
          ? `${base}${query}`
          : `${base}${query.replace('300000-300001', `${3 * MiB}-${3 * MiB + 1}`)}`;
      const error = await failure(client, target);
      expect(error.code, target).toBe(-32602);
      expect(error.data, target).toMatchObject({ argument });
      if (base.endsWith('small.bin')) expect(error.message, target).toMatch(reason);
    }
  });

  it('reads ranges of a git blob over the cap, streamed, byte for byte', async () => {
    const uri = `${git}big.bin`;
    const last = blob.length;
    expect(await bytesOf(client, `${uri}?bytes=0-999`)).toEqual(blob.subarray(0, 1000));
    expect(await bytesOf(client, `${uri}?bytes=${last - MiB}-`)).toEqual(blob.subarray(last - MiB));
    expect(await bytesOf(client, `${uri}?bytes=1500000-1500099`)).toEqual(
      blob.subarray(1_500_000, 1_500_100),
    );
    const error = await failure(client, uri);
    expect(error.code).toBe(-32010);
    expect(error.data).toMatchObject({ size: blob.length, limit: MiB });
    expect(error.message).toContain(`${uri}?bytes=0-${MiB - 1}`);
    // Each range streams the blob from git (`cat-file`): seconds alone, a minute at load 25.
  }, 180_000);

  it('reads lines and the tail of a git text blob over the cap, streamed', async () => {
    const uri = `${git}big.txt`;
    expect(await textOf(client, `${uri}?lines=200000-200002`)).toBe(
      'line 200000\nline 200001\nline 200002\n',
    );
    expect(await textOf(client, `${uri}?lines=-2`)).toBe('line 249999\nline 250000\n');
    expect(await textOf(client, `${uri}?lines=249999-`)).toBe('line 249999\nline 250000\n');
    const tooMany = await failure(client, `${uri}?lines=-200000`);
    expect(tooMany.code).toBe(-32010);
    expect(tooMany.data).toMatchObject({ size: 200_000 * 12, measure: 'range' });
    expect(await textOf(client, `${git}small.txt?lines=-2`)).toBe('b\nc\n');
  }, 180_000);
});

/** The server's peak resident memory so far (VmHWM), in bytes. */
function peakRss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

describe('with the read cap raised to 1 GiB', () => {
  let client: Client;
  let pid: number;
  let big: string;
  let bigRepo: string;

  beforeAll(async () => {
    big = makeTempDir();
    cleanup.add(() => removeTree(big));
    writeFileSync(join(big, 'half.txt'), 'text\n');
    truncateSync(join(big, 'half.txt'), 512 * MiB);
    writeFileSync(join(big, 'sixty-four.bin'), '');
    truncateSync(join(big, 'sixty-four.bin'), 64 * MiB);
    bigRepo = makeRepo({ 'zeros.dat': Buffer.alloc(64 * MiB) });
    cleanup.add(() => removeTree(bigRepo));
    const connection = await connectStdio(
      '2025',
      [],
      ['--config', config(big, bigRepo, GiB)],
      cleanup,
    );
    client = connection.client;
    pid = connection.transport.pid!;
  }, 120_000);

  it('refuses a 512 MiB text file, a 64 MiB binary and a 64 MiB git blob from their size, never buffering them', async () => {
    await client.readResource({ uri: `${fileUri(big, 'half.txt')}?lines=1-1` });
    const before = peakRss(pid);
    for (const uri of [
      fileUri(big, 'half.txt'),
      fileUri(big, 'sixty-four.bin'),
      `git://${repoName(bigRepo)}/main/zeros.dat`,
    ]) {
      const error = await failure(client, uri);
      expect(error.code, uri).toBe(-32010);
      expect(error.data, uri).toMatchObject({ code: 'too_large', measure: 'encoded' });
      expect(error.message, uri).toContain('?bytes=0-');
    }
    // Nothing near 64 MiB was ever held.
    expect(peakRss(pid) - before).toBeLessThan(32 * MiB);
  });

  it('still reads the end of the 512 MiB file by range', async () => {
    const uri = fileUri(big, 'half.txt');
    expect(await bytesOf(client, `${uri}?bytes=${512 * MiB - 3}-`)).toEqual(Buffer.alloc(3));
    expect(await textOf(client, `${uri}?lines=1-1`)).toBe('text\n');
  });
});
