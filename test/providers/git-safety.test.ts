// Pins the git provider's safety: with a repository whose own config, attributes and hooks would run
// programs (hooks, core.hooksPath, core.fsmonitor, core.pager, diff.external, textconv, filters, a
// gpg.program for log.showSignature) — each proven live by plain git first — no listing, read,
// history, commit view, completion or watch ever runs one, even with hostile GIT_* variables in
// the server's environment, and nothing under .git is written.
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Completion } from '../../src/core/types.js';
import { gitProvider } from '../../src/providers/git/index.js';
import { eventually } from '../helpers/eventually.js';
import { commit, git, makeRepo } from './git-helpers.js';
import { ctx, removeDir, tempDir, walkProvider } from './helpers.js';

const HOOKS = [
  'pre-commit',
  'post-commit',
  'post-checkout',
  'reference-transaction',
  'post-index-change',
  'pre-auto-gc',
  'fsmonitor-watchman',
  'post-rewrite',
];

describe('git provider safety', () => {
  let dir: string;
  let markers: string;
  let first: string;
  let second: string;

  /** A script that leaves a marker named `name`, then passes stdin through (as a filter must). */
  const script = (name: string): string => {
    const path = join(markers, '..', `bin-${name}`);
    writeFileSync(path, `#!/bin/sh\ntouch '${join(markers, name)}'\ncat\n`);
    chmodSync(path, 0o755);
    return path;
  };
  const planted = (): string[] => readdirSync(markers).sort();
  /** Every path under .git with its size and modification time: any write shows. */
  // Every entry of .git with its size and mtime; main's ref by its content, since the watch test
  // moves it by hand and puts it back (its mtime cannot be restored to the nanosecond).
  const snapshot = (): string[] =>
    (readdirSync(join(dir, '.git'), { recursive: true }) as string[]).sort().map((rel) => {
      const path = join(dir, '.git', rel);
      if (rel === join('refs', 'heads', 'main')) return `${rel} ${readFileSync(path, 'utf8')}`;
      const stats = statSync(path);
      return `${rel} ${stats.size} ${stats.mtimeMs}`;
    });

  beforeAll(() => {
    dir = makeRepo({ 'README.md': '# one\n', 'src/a.txt': 'a\n' });
    first = git(dir, 'rev-parse', 'HEAD');
    second = commit(
      dir,
      { 'README.md': '# two\n', '.gitattributes': '* filter=evil diff=evil\n' },
      'second',
    );
    const side = tempDir('reservoir-git-markers-');
    markers = join(side, 'markers');
    mkdirSync(markers);
    // Armed only now: the test's own commits above ran none of it.
    for (const hook of HOOKS) {
      writeFileSync(
        join(dir, '.git/hooks', hook),
        `#!/bin/sh\ntouch '${join(markers, `hook-${hook}`)}'\n`,
      );
      chmodSync(join(dir, '.git/hooks', hook), 0o755);
    }
    const hooksPath = join(side, 'hooks');
    mkdirSync(hooksPath);
    for (const hook of HOOKS) {
      writeFileSync(
        join(hooksPath, hook),
        `#!/bin/sh\ntouch '${join(markers, `hookspath-${hook}`)}'\n`,
      );
      chmodSync(join(hooksPath, hook), 0o755);
    }
    git(dir, 'config', 'core.hooksPath', hooksPath);
    git(dir, 'config', 'core.fsmonitor', script('fsmonitor'));
    git(dir, 'config', 'core.pager', script('pager'));
    git(dir, 'config', 'diff.external', script('diff-external'));
    git(dir, 'config', 'diff.evil.textconv', script('textconv'));
    git(dir, 'config', 'diff.evil.command', script('diff-command'));
    git(dir, 'config', 'filter.evil.clean', script('filter-clean'));
    git(dir, 'config', 'filter.evil.smudge', script('filter-smudge'));
    git(dir, 'config', 'log.showSignature', 'true');
    git(dir, 'config', 'gpg.program', script('gpg'));
    git(dir, 'config', 'core.sshCommand', script('ssh'));
  });
  afterAll(() => {
    removeDir(dir);
    removeDir(join(markers, '..'));
  });

  it('has a repository whose config does run programs under plain git (the control)', () => {
    git(dir, 'diff', first, second);
    git(dir, 'cat-file', '--textconv', `${second}:README.md`);
    git(dir, 'cat-file', '--filters', `${second}:README.md`);
    git(dir, 'status');
    // The diff=evil attribute routes `git diff` to diff.evil.command (diff.external's place).
    expect(planted()).toEqual(
      expect.arrayContaining([
        'diff-command',
        'textconv',
        'filter-smudge',
        'fsmonitor',
        'hookspath-post-index-change',
      ]),
    );
    for (const name of planted()) rmSync(join(markers, name));
    expect(planted()).toEqual([]);
  });

  it('runs none of it for any listing, read, view, completion or watch — with hostile GIT_* variables set', async () => {
    for (const name of planted()) rmSync(join(markers, name));
    const before = snapshot();
    const saved = { ...process.env };
    process.env['GIT_DIR'] = '/nonexistent';
    process.env['GIT_EXTERNAL_DIFF'] = script('env-external-diff');
    process.env['GIT_PAGER'] = script('env-pager');
    process.env['GIT_CONFIG_PARAMETERS'] = `'core.pager'='${script('env-config')}'`;
    process.env['GIT_SSH_COMMAND'] = script('env-ssh');
    const provider = gitProvider({ path: dir, pollIntervalMs: 20 });
    try {
      const root = provider.root;
      const items = (await walkProvider(provider, 1)).items;
      expect(items.map((i) => i.title)).toEqual(['.gitattributes', 'README.md', 'src/a.txt']);
      for (const item of items) await provider.read(item.uri, ctx());
      const readme = await provider.read(`${root}main/README.md`, ctx());
      expect(readme.contents[0]).toMatchObject({ text: '# two\n' }); // as stored: no smudge, no textconv
      for (const uri of [
        `${root}${first}/README.md`,
        `${root}log/main`,
        `${root}log/main/README.md?limit=5`,
        `${root}commits/${second}`,
        `${root}commits/${first}`,
      ]) {
        await provider.read(uri, ctx());
      }
      const view = JSON.parse(
        ((await provider.read(`${root}commits/${second}`, ctx())).contents[0] as { text: string })
          .text,
      );
      expect(view.diff).toContain('-# one\n+# two\n'); // git's own diff, not the external tool's
      const templates = provider.templates!();
      const file = templates.find((t) => t.name.endsWith('-file'));
      const commitTemplate = templates.find((t) => t.name.endsWith('-commit'));
      expect(((await file!.complete!['ref']!('', {}, ctx())) as Completion).values).toContain(
        'main',
      );
      expect(
        ((await file!.complete!['ref']!(second.slice(0, 6), {}, ctx())) as Completion).values,
      ).toContain(second);
      expect(((await file!.complete!['path']!('src/', {}, ctx())) as Completion).values).toEqual([
        'src/a.txt',
      ]);
      await commitTemplate!.complete!['sha']!(first.slice(0, 5), {}, ctx());
      const changes: string[] = [];
      const stop = await provider.watch!(`${root}main/README.md`, () => changes.push('readme'));
      const stopList = await provider.onListChanged!(() => changes.push('list'));
      // Move main back to the first commit by hand (no git process, so no hook or config runs),
      // wait until the watcher's polling has seen it, then put the ref back.
      const ref = join(dir, '.git/refs/heads/main');
      writeFileSync(ref, `${first}\n`);
      await eventually(() => changes.includes('readme'), 'the watch to see main move');
      writeFileSync(ref, `${second}\n`);
      stop();
      stopList();
    } finally {
      await provider.close();
      for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
      Object.assign(process.env, saved);
    }
    expect(planted()).toEqual([]);
    expect(existsSync(join(dir, '.git/index.lock'))).toBe(false);
    expect(snapshot()).toEqual(before); // nothing in the repository was written
  });
});
