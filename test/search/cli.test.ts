// `reservoir index` and `reservoir search` as a user runs them (the built CLI), the state directory
// they share (a second run reuses the index and reads nothing), a refused query's message and exit
// code, the progress reporter's two forms, and a cursor printed by `reservoir list --json` working
// in the next run (its key is kept in the state directory, 0600).
import { execFile } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { progressReporter } from '../../src/cli/progress.js';
import { emphasisWanted, formatHit } from '../../src/cli/search-hit.js';
import { ensureBuilt, CLI_PATH } from '../helpers/build.js';
import { fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';

let root: string;
let state: string;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI_PATH, ...args],
      { timeout: 30_000, env },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin?.end();
  });
}

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir('reservoir-search-cli-');
  state = makeTempDir('reservoir-search-state-');
  writeTree(root, {
    'a.md': 'The retry budget is three.\n',
    'b.md': 'Nothing to see.\n',
    'c/d.txt': 'Another retry, without a budget.\n',
  });
});

afterAll(() => {
  removeTree(root);
  removeTree(state);
});

describe('reservoir index and reservoir search', () => {
  it('builds the index with a summary on stderr, then a second run reuses it and reads no text', async () => {
    const first = await runCli(['index', root, '--state-dir', state]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toBe('');
    expect(first.stderr).toMatch(
      /^indexed 3 resources in [\d.]+ s \(76 bytes of text read; the index holds 3 resources, 76 bytes\)$/m,
    );
    expect(first.stderr).toContain(`index: ${join(state, 'search')}`);
    const second = await runCli(['index', root, '--state-dir', state]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(
      /^indexed 3 resources in [\d.]+ s \(0 bytes of text read; the index holds 3 resources, 76 bytes\)$/m,
    );
  });

  it('lets two processes index into one state directory at once, and the index stays sound', async () => {
    const shared = makeTempDir('reservoir-search-state-');
    const runs = await Promise.all([
      runCli(['index', root, '--state-dir', shared]),
      runCli(['index', root, '--state-dir', shared]),
    ]);
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    const after = await runCli(['search', 'budget', root, '--state-dir', shared, '--json']);
    expect(after.stdout.trim().split('\n')).toHaveLength(2);
    removeTree(shared);
  });

  it('prints hits best first, as text or JSON lines', async () => {
    const text = await runCli(['search', 'retry budget', root, '--state-dir', state]);
    expect(text.code, text.stderr).toBe(0);
    const uris = text.stdout
      .split('\n')
      .filter((line) => line.startsWith('file:'))
      .map((line) => line.split('\t')[0]);
    expect(uris.sort()).toEqual([fileUri(root, 'a.md'), fileUri(root, 'c/d.txt')]);
    // Off a terminal: the snippet as it is, the matched words on the next line as JSON strings.
    expect(text.stdout).toContain('\n    The retry budget is three.\n    match: "retry"\n');
    const json = await runCli([
      'search',
      'retry',
      root,
      '--state-dir',
      state,
      '--json',
      '--limit',
      '1',
    ]);
    const lines = json.stdout
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as {
            uri: string;
            score: number;
            snippet: string;
            highlights: [number, number][];
          },
      );
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      uri: expect.stringMatching(/^file:/),
      score: expect.any(Number),
    });
    const [hit] = lines;
    expect(hit!.highlights).toHaveLength(1);
    expect(hit!.snippet.slice(...hit!.highlights[0]!)).toBe('retry');
    expect(hit!.snippet).not.toContain('**');
  });

  it("prints a file's own Markdown **bold** as text, not as a match", async () => {
    const markdown = makeTempDir('reservoir-search-bold-');
    writeTree(markdown, { 'bold.md': 'A **loud** word, then the quiet heron.\n' });
    const markdownState = makeTempDir('reservoir-search-state-');
    const run = await runCli(['search', 'heron', markdown, '--state-dir', markdownState]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(
      `${fileUri(markdown, 'bold.md')}\t${run.stdout.split('\t')[1]!.split('\n')[0]!}\n    A **loud** word, then the quiet heron.\n    match: "heron"\n`,
    );
    removeTree(markdown);
    removeTree(markdownState);
  });

  it('exits 1 with the parser’s message for a bad query, and says when nothing matches', async () => {
    const bad = await runCli(['search', 'retry "budget', root, '--state-dir', state]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toBe(
      "reservoir: Invalid argument 'query': this quote is never closed (at column 7)\n",
    );
    const none = await runCli(['search', 'pelican', root, '--state-dir', state]);
    expect(none.code).toBe(0);
    expect(none.stderr).toBe('no resources match "pelican"\n');
  });
});

describe('the config file', () => {
  it('places the state directory relative to the config file and applies the search section', async () => {
    const home = makeTempDir('reservoir-search-config-');
    writeTree(home, {
      'docs/small.md': 'a small okapi\n',
      'docs/large.md': `a large okapi ${'x'.repeat(200)}\n`,
      'reservoir.yaml': [
        'sources:',
        '  - type: files',
        '    root: docs',
        'server:',
        '  stateDir: state',
        'search:',
        '  maxFileBytes: 100',
        '',
      ].join('\n'),
    });
    const run = await runCli([
      'search',
      'okapi',
      '--config',
      join(home, 'reservoir.yaml'),
      '--json',
    ]);
    expect(run.code, run.stderr).toBe(0);
    // The large file is over the byte cap: found by its name only, so not by a word of its text.
    expect(
      run.stdout
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { name: string }).name),
    ).toEqual(['small.md']);
    expect(
      readdirSync(join(home, 'state', 'search')).some((name) => name.endsWith('.sqlite')),
    ).toBe(true);
    removeTree(home);
  });
});

describe('the cursor key in the state directory', () => {
  it('makes a cursor printed by `reservoir list --json` work in the next run, from a 0600 key file', async () => {
    const first = await runCli(['list', root, '--json', '--limit', '1', '--state-dir', state]);
    expect(first.code, first.stderr).toBe(0);
    const { nextCursor } = JSON.parse(first.stdout.trim().split('\n').at(-1)!) as {
      nextCursor: string;
    };
    const next = await runCli([
      'list',
      root,
      '--json',
      '--cursor',
      nextCursor,
      '--state-dir',
      state,
    ]);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout.trim().split('\n')).toHaveLength(2);
    expect(statSync(join(state, 'cursor.key')).mode & 0o777).toBe(0o600);
    const elsewhere = makeTempDir('reservoir-search-state-');
    const foreign = await runCli([
      'list',
      root,
      '--json',
      '--cursor',
      nextCursor,
      '--state-dir',
      elsewhere,
    ]);
    removeTree(elsewhere);
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain('Invalid cursor');
  });
});

describe('the progress reporter', () => {
  const progress = { done: 500, total: 2000, bytes: 5_000_000, building: true, startedAt: 0 };
  const fakeStream = (isTTY: boolean): { stream: NodeJS.WriteStream; written: string[] } => {
    const written: string[] = [];
    return {
      stream: {
        isTTY,
        write: (chunk: string) => written.push(chunk),
      } as unknown as NodeJS.WriteStream,
      written,
    };
  };

  it('redraws one bar in place on a terminal: files, bytes, rate and ETA', () => {
    const { stream, written } = fakeStream(true);
    progressReporter(stream, () => 1000).update(progress);
    expect(written).toEqual([
      '\r[######..................] 500/2,000 files, 5.0 MB, 500 files/s, ETA 3s\u001b[K',
    ]);
  });

  it('writes a plain line at most every five seconds otherwise', () => {
    const { stream, written } = fakeStream(false);
    let now = 6000;
    const reporter = progressReporter(stream, () => now);
    reporter.update(progress);
    now = 7000;
    reporter.update(progress);
    now = 11_000;
    reporter.update({ ...progress, done: 1000 });
    expect(written).toEqual([
      'indexing: 500/2,000 files, 5.0 MB, 83 files/s, ETA 18s\n',
      'indexing: 1,000/2,000 files, 5.0 MB, 91 files/s, ETA 11s\n',
    ]);
  });
});

describe('a hit as printed', () => {
  const hit = {
    uri: 'file:///n.md',
    name: 'n.md',
    score: 1.5,
    snippet: 'A **loud** \u001b[2J heron.',
    highlights: [[16, 21]] as [number, number][],
  };

  it("draws the match bold and underlined on a terminal, and the text's ** as it is", () => {
    expect(formatHit(hit, true)).toBe(
      'file:///n.md\t1.5\n    A **loud** \uFFFD[2J \u001b[1;4mheron\u001b[22;24m.',
    );
  });

  it('quotes the matched words off a terminal, and never passes a control character through', () => {
    expect(formatHit(hit, false)).toBe(
      'file:///n.md\t1.5\n    A **loud** \uFFFD[2J heron.\n    match: "heron"',
    );
  });

  it('wants emphasis only on a terminal without NO_COLOR or TERM=dumb', () => {
    expect(emphasisWanted({ isTTY: true }, {})).toBe(true);
    expect(emphasisWanted({ isTTY: false }, {})).toBe(false);
    expect(emphasisWanted({}, {})).toBe(false);
    expect(emphasisWanted({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(emphasisWanted({ isTTY: true }, { TERM: 'dumb' })).toBe(false);
  });
});
