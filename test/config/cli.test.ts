// Pins the command line around config files: `reservoir check` prints a one-line summary and exits
// 0, or every problem on stderr and exits 1; `serve --config` with a broken file exits 1 before
// serving, with nothing on stdout; ./reservoir.yaml is found by default (and --no-config skips it);
// flags given on the command line override the file; `reservoir schema` prints the shipped schema.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, REPO_ROOT, runCli, type CliRun } from '../helpers/build.js';
import { fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';

const GOOD =
  'sources:\n  - type: files\n    root: docs\n    exclude: ["*.log"]\nprompts:\n  - name: hi\n    messages: [{ role: user, text: hi }]\n';
const BAD =
  'sources:\n  - type: files\n    root: nowhere\n    watch: sometimes\nserver:\n  http: { port: -1 }\n';

let dir: string;

beforeAll(async () => {
  await ensureBuilt();
  dir = makeTempDir('reservoir-config-cli-');
  writeTree(dir, {
    'docs/a.md': '# a\n',
    'docs/b.log': 'log\n',
    'extra/c.txt': 'c\n',
    'reservoir.yaml': GOOD,
    'bad.yaml': BAD,
  });
  writeFileSync(
    join(dir, 'http.json'),
    JSON.stringify({
      sources: [{ type: 'files', root: 'docs' }],
      server: { http: { port: 8123 } },
    }),
  );
});

afterAll(() => removeTree(dir));

describe('reservoir check', () => {
  it('prints a one-line summary for a valid file and exits 0 (./reservoir.yaml by default)', async () => {
    const runs = await Promise.all([
      runCli(['check'], dir),
      runCli(['check', '--config', 'http.json'], dir),
    ]);
    expect(runs[0]).toEqual({
      code: 0,
      stdout: 'reservoir.yaml: valid (1 source, 1 prompt; serves stdio)\n',
      stderr: '',
    });
    expect(runs[1]).toEqual({
      code: 0,
      stdout: 'http.json: valid (1 source, 0 prompts; serves http://127.0.0.1:8123/mcp)\n',
      stderr: '',
    });
  });

  it('prints every problem on stderr and exits 1', async () => {
    const run = await runCli(['check', '--config', 'bad.yaml'], dir);
    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr: [
        "bad.yaml:4:5: sources[0].watch: expected one of 'native', 'poll', got 'sometimes'",
        'bad.yaml:6:11: server.http.port: expected at least 0, got -1',
        '',
      ].join('\n'),
    });
  });

  it('says when there is no config file to check', async () => {
    const run = await runCli(['check'], join(dir, 'docs'));
    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'reservoir.yaml, reservoir.yml, reservoir.json: no config file here; pass --config PATH\n',
    });
  });
});

describe('reservoir serve --config', () => {
  it('exits 1 without serving when the file is broken, in stdio and HTTP mode', async () => {
    const runs = await Promise.all([
      runCli(['serve', '--config', 'bad.yaml'], dir),
      runCli(['serve', '--config', 'bad.yaml', '--http', '127.0.0.1:0'], dir),
    ]);
    for (const run of runs) {
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(
        "bad.yaml:4:5: sources[0].watch: expected one of 'native', 'poll', got 'sometimes'",
      );
    }
  });
});

describe('check and serve share one validator', () => {
  it('refuses a SQL source with both path and url with the same message from check and from serve', async () => {
    writeFileSync(
      join(dir, 'both.yaml'),
      'sources:\n  - type: sql\n    path: shop.db\n    url: postgres://127.0.0.1:1/x\n',
    );
    writeFileSync(
      join(dir, 'neither.yaml'),
      'sources:\n  - type: sql\n    pageRows: 5\n    maxRows: 2\n',
    );
    const both = await Promise.all([
      runCli(['check', '--config', 'both.yaml'], dir),
      runCli(['serve', '--config', 'both.yaml'], dir),
    ]);
    for (const run of both) {
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(
        'both.yaml:4:5: sources[0].url: give exactly one of path (SQLite) and url (PostgreSQL, MySQL or MariaDB)\n',
      );
    }
    const neither = await Promise.all([
      runCli(['check', '--config', 'neither.yaml'], dir),
      runCli(['serve', '--config', 'neither.yaml'], dir),
    ]);
    for (const run of neither) {
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        'neither.yaml:2:5: sources[0].path: give exactly one of path (SQLite) and url (PostgreSQL, MySQL or MariaDB)',
      );
      expect(run.stderr).toContain(
        'neither.yaml:3:5: sources[0].pageRows: must not exceed maxRows (2)',
      );
    }
  });
});

describe('config and flags together', () => {
  it('lists the config sources, then command-line roots; an explicit flag overrides the file', async () => {
    const runs = await Promise.all([
      runCli(['list'], dir),
      runCli(['list', 'extra'], dir),
      runCli(['list', '--exclude', '*.md'], dir),
      runCli(['list', '--no-config', 'extra'], dir),
    ]);
    const uris = (run: CliRun): string[] =>
      run.stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split('\t')[0]!);
    expect(uris(runs[0]!)).toEqual([fileUri(dir, 'docs/a.md')]);
    expect(uris(runs[1]!)).toEqual([fileUri(dir, 'docs/a.md'), fileUri(dir, 'extra/c.txt')]);
    expect(uris(runs[2]!)).toEqual([fileUri(dir, 'docs/b.log')]);
    expect(uris(runs[3]!)).toEqual([fileUri(dir, 'extra/c.txt')]);
  });
});

describe('reservoir schema', () => {
  it('prints the schema the package ships', async () => {
    const run = await runCli(['schema'], dir);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      readFileSync(join(REPO_ROOT, 'schema', 'reservoir.schema.json'), 'utf8'),
    );
  });
});
