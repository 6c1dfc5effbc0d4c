/**
 * Real repositories for the git provider tests: `git init` in a temp directory, a local identity,
 * files written and committed through the git CLI (with an environment free of the user's config).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir } from './helpers.js';

const ENV: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !key.startsWith('GIT_')),
);
ENV['GIT_CONFIG_NOSYSTEM'] = '1';
ENV['GIT_CONFIG_GLOBAL'] = '/dev/null';

/** Runs git in `dir` and returns its trimmed stdout. */
export function git(dir: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd: dir,
    env: ENV,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

/** A fresh repository on branch `main` with a local identity; `files` committed as the first commit. */
export function makeRepo(
  files: Record<string, string | Buffer> = {},
  prefix = 'reservoir-git-',
): string {
  const dir = tempDir(prefix);
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'Test Author');
  git(dir, 'config', 'user.email', 'author@example.com');
  git(dir, 'config', 'commit.gpgsign', 'false');
  if (Object.keys(files).length > 0) commit(dir, files, 'initial');
  return dir;
}

/** Writes `files` (null deletes), stages everything and commits; returns the new commit id. */
export function commit(
  dir: string,
  files: Record<string, string | Buffer | null>,
  message: string,
): string {
  for (const [rel, content] of Object.entries(files)) {
    const abs = join(dir, rel);
    if (content === null) {
      rmSync(abs, { force: true });
      continue;
    }
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, content);
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '--allow-empty', '--no-verify', '-m', message);
  return git(dir, 'rev-parse', 'HEAD');
}

export function repoName(dir: string): string {
  return dir.split('/').pop()!;
}
