// Pins the CLI's behaviour on bad input and the cleanliness of its stdout: an unknown flag, a bad
// number, a missing root or a root that is a file each exit non-zero with a message on stderr that
// names the problem and nothing on stdout; and in stdio mode — even at the most verbose log level,
// even fed garbage — every line the server writes to stdout is a JSON-RPC message.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli } from '../helpers/build.js';
import { Cleanup, ERAS } from '../helpers/clients.js';
import { dirUri, fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { eraParams, RawStdio } from '../helpers/wire.js';

const cleanup = new Cleanup();
let root: string;

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir();
  cleanup.add(() => removeTree(root));
  const files: Record<string, string | Uint8Array> = {
    'bin.dat': Buffer.from([0, 1, 2, 255]),
    'dir/x.md': '# x\n',
  };
  for (let i = 0; i < 12; i += 1) files[`f${i}.txt`] = `file ${i}\n`;
  writeTree(root, files);
});

afterAll(() => cleanup.run());

/** Runs the CLI to completion (stdin closed at once), with a deadline. */
describe('help, with only `serve` defined when serving', () => {
  it("prints every command for --help and an unknown command, and serve's own usage for serve --help", async () => {
    const [all, unknown, serve] = await Promise.all([
      runCli(['--help']),
      runCli(['frobnicate']),
      runCli(['serve', '--help']),
    ]);
    expect(all.code).toBe(0);
    for (const command of [
      'serve',
      'check',
      'list',
      'read',
      'search',
      'index',
      'setup',
      'skills',
      'token',
      'completion',
      'schema',
    ])
      expect(all.stdout).toMatch(new RegExp(`^\\s+${command}\\b`, 'm'));
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
    expect(serve.code).toBe(0);
    expect(serve.stdout).toContain('Usage: reservoir serve');
    expect(serve.stdout).toContain('--http');
  });
});

describe('bad command lines', () => {
  it('exits non-zero naming an unknown flag, with nothing on stdout', async () => {
    const cases = [
      ['serve', root, '--bogus'],
      ['--frobnicate'],
      ['serve', '--http', '127.0.0.1:0', '--no-such-flag', root],
    ];
    const runs = await Promise.all(cases.map((args) => runCli(args)));
    for (const [i, args] of cases.entries()) {
      const run = runs[i]!;
      const flag = args.find((a) => a.startsWith('--') && !['--http'].includes(a))!;
      expect(run.code, args.join(' ')).not.toBe(0);
      expect(run.code, args.join(' ')).not.toBeNull();
      expect(run.stderr, args.join(' ')).toContain(flag);
      expect(run.stdout, args.join(' ')).toBe('');
    }
  });

  it('exits non-zero naming a bad --page-size value, with nothing on stdout', async () => {
    const values = ['0', 'abc', '-5', '10001'];
    const runs = await Promise.all(
      values.map((value) => runCli(['serve', root, '--page-size', value])),
    );
    for (const [i, value] of values.entries()) {
      const run = runs[i]!;
      expect(run.code, value).not.toBe(0);
      expect(run.stderr, value).toMatch(new RegExp(`${value.replace('-', '\\-')}|page`, 'i'));
      expect(run.stdout, value).toBe('');
    }
  });

  it('exits non-zero when a root does not exist, saying so on stderr and nothing on stdout', async () => {
    const missing = join(root, 'no', 'such', 'dir');
    const extras = [[], ['--http', '127.0.0.1:0']];
    const runs = await Promise.all(extras.map((extra) => runCli(['serve', missing, ...extra])));
    for (const [i, extra] of extras.entries()) {
      const run = runs[i]!;
      expect(run.code, extra.join(' ')).toBe(1);
      expect(run.stderr, extra.join(' ')).toContain(missing);
      expect(run.stderr, extra.join(' ')).toContain('does not exist');
      expect(run.stdout, extra.join(' ')).toBe('');
    }
  });

  it('exits non-zero when a root is a file, saying so on stderr and nothing on stdout', async () => {
    const file = join(root, 'f1.txt');
    const cases = [[file], [root, file]];
    const runs = await Promise.all(cases.map((roots) => runCli(['serve', ...roots])));
    for (const [i, roots] of cases.entries()) {
      const run = runs[i]!;
      expect(run.code, roots.join(' ')).toBe(1);
      expect(run.stderr, roots.join(' ')).toContain(`${file} is a file, not a directory`);
      expect(run.stdout, roots.join(' ')).toBe('');
    }
  });
});

describe.each(ERAS)('stdout in stdio mode, %s era', (era) => {
  it('carries nothing but JSON-RPC lines through a whole session at --log-level debug, garbage input included', async () => {
    const wire = RawStdio.serve([root], ['--log-level', 'debug', '--page-size', '5']);
    cleanup.add(() => wire.kill());
    const params = (p: Record<string, unknown> = {}): Record<string, unknown> => eraParams(era, p);
    let requests = 0;
    const ask = async (method: string, p: Record<string, unknown> = {}) => {
      requests += 1;
      return wire.request(method, params(p));
    };

    if (era === '2025') {
      requests += 1;
      await wire.initialize();
    } else {
      await ask('server/discover');
    }
    await ask('ping');
    let cursor: string | undefined;
    do {
      const page = await ask('resources/list', cursor === undefined ? {} : { cursor });
      expect(page.error).toBeUndefined();
      cursor = page.result?.['nextCursor'] as string | undefined;
    } while (cursor !== undefined);
    await ask('resources/templates/list');
    expect((await ask('resources/read', { uri: fileUri(root, 'f1.txt') })).result).toBeDefined();
    expect((await ask('resources/read', { uri: fileUri(root, 'bin.dat') })).result).toBeDefined();
    expect((await ask('resources/read', { uri: dirUri(root, 'dir') })).result).toBeDefined();
    expect(
      (await ask('resources/read', { uri: fileUri(root, 'missing.txt') })).error,
    ).toBeDefined();
    expect((await ask('resources/read', { uri: 'not a uri' })).error).toBeDefined();
    expect((await ask('resources/list', { cursor: 'forged.cursor' })).error).toBeDefined();
    expect((await ask('tools/call', { name: 'nope' })).error).toBeDefined();
    expect((await ask('no/such/method')).error).toBeDefined();
    // Garbage on stdin: not JSON, JSON but not JSON-RPC, an unknown notification.
    wire.child.stdin.write('this is not json\n');
    wire.send({ hello: 'world' });
    wire.send({ jsonrpc: '2.0', method: 'notifications/unknown', params: params() });
    expect((await ask('resources/read', { uri: fileUri(root, 'f2.txt') })).error).toBeUndefined();

    expect(await wire.end()).toEqual({ code: 0, signal: null });
    const lines = wire.lines.filter((line, i) => line !== '' || i !== wire.lines.length - 1);
    const notJsonRpc = lines.filter((line) => {
      try {
        const message = JSON.parse(line) as Record<string, unknown>;
        return (
          message['jsonrpc'] !== '2.0' ||
          !('id' in message || 'method' in message) ||
          ('id' in message && !('result' in message || 'error' in message || 'method' in message))
        );
      } catch {
        return true;
      }
    });
    expect(notJsonRpc).toEqual([]);
    // Every request got its one answer, and the logs went to stderr.
    const answered = lines
      .map((l) => JSON.parse(l) as { id?: unknown })
      .filter((m) => typeof m.id === 'number');
    expect(answered.length).toBeGreaterThanOrEqual(requests);
    expect(wire.stderr).toMatch(/"level":\d+/);
  });
});
