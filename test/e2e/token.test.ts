// `reservoir token` makes a random token with its digest, and `--hash` digests one read from stdin
// (never from argv); a token too short to be safe is refused with a message naming the rule.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI_PATH, ensureBuilt } from '../helpers/build.js';

const run = (args: string[], input?: string) =>
  spawnSync(process.execPath, [CLI_PATH, ...args], { input, encoding: 'utf8' });

describe('reservoir token', () => {
  beforeAll(() => ensureBuilt());

  it('prints a fresh random token and the sha256 of exactly that token', () => {
    const first = run(['token']);
    const second = run(['token']);
    expect(first.status).toBe(0);
    const [, token, digest] =
      /^token: {2}(\S+)\nsha256: ([0-9a-f]{64})\n$/.exec(first.stdout) ?? [];
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(createHash('sha256').update(token!).digest('hex')).toBe(digest);
    expect(second.stdout).not.toBe(first.stdout);
  });

  it('hashes a token from stdin, ignoring one trailing newline', () => {
    const token = 'a-long-enough-token-0123456789abcdefghij';
    const result = run(['token', '--hash'], `${token}\n`);
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(`${createHash('sha256').update(token).digest('hex')}\n`);
  });

  it('refuses a short token with a message and exit code 1', () => {
    const result = run(['token', '--hash'], 'short');
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(
      'expected at least 32 characters, got 5; use a random token: reservoir token makes one',
    );
  });
});
