// Pins the defaults a new user meets first: `reservoir serve` with nothing to serve refuses and
// shows how to name a directory (it never serves whatever directory a host started it in);
// reservoir.yml and reservoir.json are found like reservoir.yaml (two of them is an error);
// `--http PORT` alone is a port on 127.0.0.1, served to the real SDK client in both eras; and
// binding a wildcard address without --allowed-host warns at start with the fix, and without
// authentication is refused with the flag that allows it.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAddress } from '../../src/cli/options.js';
import { ensureBuilt, runCli } from '../helpers/build.js';
import { Cleanup, connectHttp, ERAS, spawnHttpServer } from '../helpers/clients.js';
import { freePort } from '../helpers/ports.js';
import { fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';

const cleanup = new Cleanup();
let dir: string;

beforeAll(async () => {
  await ensureBuilt();
  dir = makeTempDir();
  cleanup.add(() => removeTree(dir));
  writeTree(dir, {
    'empty/.keep': '',
    'yml/reservoir.yml': 'sources:\n  - type: files\n    root: docs\n',
    'yml/docs/a.md': '# a\n',
    'json/reservoir.json': '{ "sources": [{ "type": "files", "root": "docs" }] }\n',
    'json/docs/b.md': '# b\n',
    'both/reservoir.yaml': 'sources: []\n',
    'both/reservoir.json': '{ "sources": [] }\n',
    'served/c.md': '# c\n',
  });
});

afterAll(() => cleanup.run());

describe('reservoir serve with nothing named', () => {
  it('refuses without roots, config file or --git, showing how to name a directory, and writes nothing on stdout', async () => {
    const cwd = join(dir, 'empty');
    for (const extra of [[], ['--http', '127.0.0.1:0']]) {
      const run = await runCli(['serve', ...extra], cwd);
      expect(run.code, extra.join(' ')).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain('nothing to serve');
      expect(run.stderr).toContain('Usage: reservoir serve DIR [DIR...]');
      expect(run.stderr).toContain('reservoir serve .');
    }
  });

  it('still lists the current directory with `reservoir list` and no roots', async () => {
    const run = await runCli(['list', '--no-config'], join(dir, 'served'));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(fileUri(join(dir, 'served'), 'c.md'));
  });
});

describe('config file names', () => {
  it.each([
    ['yml', 'reservoir.yml', 'a.md'],
    ['json', 'reservoir.json', 'b.md'],
  ])(
    'finds %s in the working directory like reservoir.yaml (check and list)',
    async (sub, name, file) => {
      const cwd = join(dir, sub);
      const check = await runCli(['check'], cwd);
      expect(check.code, check.stderr).toBe(0);
      expect(check.stdout).toContain(`${name}: valid (1 source`);
      const list = await runCli(['list'], cwd);
      expect(list.code, list.stderr).toBe(0);
      expect(list.stdout).toContain(fileUri(join(cwd, 'docs'), file));
    },
  );

  it('refuses two config files in one directory, naming both and the way out', async () => {
    const run = await runCli(['check'], join(dir, 'both'));
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('reservoir.yaml and reservoir.json are both here');
    expect(run.stderr).toContain('--config PATH');
  });
});

describe('--http addresses', () => {
  it('reads a bare number as a port on 127.0.0.1, and keeps every other spelling', () => {
    expect(parseAddress('8080')).toEqual({ host: '127.0.0.1', port: 8080 });
    expect(parseAddress('0')).toEqual({ host: '127.0.0.1', port: 0 });
    expect(parseAddress(':9000')).toEqual({ host: '127.0.0.1', port: 9000 });
    expect(parseAddress('0.0.0.0:7337')).toEqual({ host: '0.0.0.0', port: 7337 });
    expect(parseAddress('localhost:1')).toEqual({ host: 'localhost', port: 1 });
    expect(parseAddress('[::1]:8080')).toEqual({ host: '::1', port: 8080 });
    expect(() => parseAddress('70000')).toThrow('port 70000 is out of range');
    expect(() => parseAddress('host:')).toThrow(
      "expected HOST:PORT (e.g. 127.0.0.1:7337), got 'host:'",
    );
    expect(() => parseAddress('a:b:1')).toThrow('expected HOST:PORT');
  });

  it.each(ERAS)('serves `--http PORT` on 127.0.0.1:PORT to the SDK client, %s era', async (era) => {
    const port = await freePort();
    const server = await spawnHttpServer([join(dir, 'served')], ['--http', String(port)], cleanup);
    expect(server.url).toBe(`http://127.0.0.1:${port}/mcp`);
    const { client, close } = await connectHttp(era, server.url);
    const read = await client.readResource({ uri: fileUri(join(dir, 'served'), 'c.md') });
    expect(read.contents[0]).toMatchObject({ text: '# c\n' });
    await close();
    await server.stop();
  });

  it('refuses a network address without authentication, naming the flag and the config field that allow it', async () => {
    const run = await runCli(['serve', join(dir, 'served'), '--http', '0.0.0.0:0']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'serving 0.0.0.0 to the network needs authentication (server.http.auth: tokens or oauth)',
    );
    expect(run.stderr).toContain('--anonymous, or server.http.anonymous: true in the config');
  });

  it('warns at start when bound to 0.0.0.0 without --allowed-host, naming the flag that fixes it', async () => {
    const server = await spawnHttpServer(
      [join(dir, 'served')],
      ['--http', '0.0.0.0:0', '--anonymous'],
      cleanup,
    );
    const warning = server
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string })
      .find((entry) => entry.msg.includes('without an allowed host'));
    expect(warning?.level).toBe(40);
    expect(warning?.msg).toContain('--allowed-host NAME');
    await server.stop();
    const quiet = await spawnHttpServer(
      [join(dir, 'served')],
      ['--http', '0.0.0.0:0', '--anonymous', '--allowed-host', 'reservoir.example'],
      cleanup,
    );
    expect(quiet.stderr()).not.toContain('without an allowed host');
    await quiet.stop();
  });
});
