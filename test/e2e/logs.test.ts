// Pins logs a person can read: over stdio the server says at start, at info on stderr, what it
// serves; with stderr piped (as MCP hosts do) every log line is JSON; `--log-format pretty` gives
// one plain line per entry with a local time and the level in words; and a terminal gets colours
// without asking (`auto`). stdout carries only protocol messages throughout. The start-up line
// is written just after the first answer, so loading the logger never delays the handshake.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPretty } from '../../src/server/logger.js';
import { CLI_PATH, ensureBuilt } from '../helpers/build.js';
import { Cleanup, connectStdio, ERAS } from '../helpers/clients.js';
import { dirUri, fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { eventually } from '../helpers/eventually.js';

const cleanup = new Cleanup();
let root: string;

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir();
  cleanup.add(() => removeTree(root));
  writeTree(root, { 'docs/a.md': '# a\n', 'src/b.ts': 'export {};\n' });
});
afterAll(() => cleanup.run());

const START_LINE = (dirs: string[]): string =>
  `serving MCP over stdio: ${dirs.map((d) => dirUri(root, d)).join(', ')}`;

/** Waits until `read()` contains `text` (the server writes stderr as it goes). */
async function stderrContaining(read: () => string, text: string): Promise<string> {
  await eventually(
    () => read().includes(text),
    () => `stderr to contain ${JSON.stringify(text)}; it holds: ${read().slice(-2000)}`,
  );
  return read();
}

describe.each(ERAS)('logs over stdio, %s era', (era) => {
  it('logs one JSON start-up line at info naming every source when stderr is piped, and keeps serving', async () => {
    const conn = await connectStdio(
      era,
      [join(root, 'docs'), join(root, 'src')],
      ['--log-level', 'info'],
      cleanup,
    );
    const read = await conn.client.readResource({ uri: fileUri(root, 'docs/a.md') });
    expect(read.contents[0]).toMatchObject({ text: '# a\n' });
    const stderr = await stderrContaining(conn.stderr, 'serving MCP over stdio');
    const entries = stderr
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const start = entries.find((entry) => entry['msg'] === START_LINE(['docs', 'src']));
    expect(start).toMatchObject({
      level: 30,
      transport: 'stdio',
      sources: [dirUri(root, 'docs'), dirUri(root, 'src')],
    });
    await conn.close();
  });

  it('writes pretty lines with a local time and the level in words for --log-format pretty, without colours into a pipe', async () => {
    const conn = await connectStdio(
      era,
      [join(root, 'docs')],
      ['--log-level', 'info', '--log-format', 'pretty'],
      cleanup,
    );
    await conn.client.listResources();
    const stderr = await stderrContaining(conn.stderr, 'serving MCP over stdio');
    const line = stderr.split('\n').find((l) => l.includes('serving MCP over stdio'))!;
    expect(line).toMatch(/^\[\d\d:\d\d:\d\d\.\d\d\d\] INFO: serving MCP over stdio: /);
    expect(line).toContain(START_LINE(['docs']));
    expect(line).not.toContain('\u001b[');
    await conn.close();
  });
});

describe('log format choice', () => {
  it('is pretty for pretty, JSON for json, and follows the terminal for auto', () => {
    expect(isPretty('pretty', false)).toBe(true);
    expect(isPretty('json', true)).toBe(false);
    expect(isPretty('auto', true)).toBe(true);
    expect(isPretty('auto', false)).toBe(false);
  });

  it('colours the lines when stderr is a terminal, with no flag', async (context) => {
    // `script` gives the command a pseudo-terminal; stdin from /dev/null ends the server at once.
    const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI_PATH)} serve ${JSON.stringify(join(root, 'docs'))} </dev/null 2>&1 >/dev/null`;
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    const spawned = await new Promise<boolean>((resolve) => {
      child.once('error', () => resolve(false));
      // 'close', not 'exit': it comes once what `script` wrote is read to its end.
      child.once('close', () => resolve(true));
    });
    if (!spawned) return context.skip('no `script` command to give the server a terminal');
    const line = out.split('\n').find((l) => l.includes('serving MCP over stdio'));
    expect(line, out).toBeDefined();
    expect(line).toContain('\u001b[32mINFO\u001b[39m');
    expect(line).toMatch(/^\[\d\d:\d\d:\d\d\.\d\d\d\] /);
  });
});

describe('when the start-up line is written', () => {
  it('waits for the first answer on stdout (so the handshake never waits for the logger), then restores the stream', async () => {
    const { PassThrough } = await import('node:stream');
    const { announceAfterFirstWrite } = await import('../../src/server/announce.js');
    const out = new PassThrough();
    const ownBefore = Object.hasOwn(out, 'write');
    let calls = 0;
    announceAfterFirstWrite(out, () => (calls += 1), 60_000);
    expect(calls).toBe(0);
    out.write('first answer\n');
    expect(calls).toBe(0); // after the write has been handed over, not inside it
    await new Promise((done) => setImmediate(done));
    expect(calls).toBe(1);
    out.write('second\n');
    await new Promise((done) => setImmediate(done));
    expect(calls).toBe(1);
    expect(Object.hasOwn(out, 'write')).toBe(ownBefore);
    expect(out.read()?.toString()).toBe('first answer\nsecond\n');
  });

  it('is written at shutdown when nothing was ever answered', async () => {
    const { PassThrough } = await import('node:stream');
    const { announceAfterFirstWrite } = await import('../../src/server/announce.js');
    let calls = 0;
    const now = announceAfterFirstWrite(new PassThrough(), () => (calls += 1), 60_000);
    now();
    now();
    expect(calls).toBe(1);
  });
});
