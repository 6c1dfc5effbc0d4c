// Pins the git provider's change detection and recovery: a branch moving (commit, reset, a branch
// elsewhere) fires `updated` only for watched files whose blob changed at that ref, and list
// changes only when the default branch's file set changed; watches stop when the last one leaves;
// a repository moved away fails only its own resources (unavailable, its list too) and serves
// again when it returns — as the same directory or a new one; a killed object reader is restarted.
import { renameSync, rmSync } from 'node:fs';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { UnavailableError } from '../../src/core/errors.js';
import { CatFile, ObjectTooLarge } from '../../src/providers/git/cat-file.js';
import { gitEnv } from '../../src/providers/git/exec.js';
import { gitProvider, type GitProvider } from '../../src/providers/git/index.js';
import { eventually } from '../helpers/eventually.js';
import { commit, git, makeRepo } from './git-helpers.js';
import { ctx, expectNotFound, rejection, removeDir } from './helpers.js';

const POLL_MS = 20;

/** Waits for `check`; "nothing else fired" is proven by a later marker event arriving first. */
const waitFor = (check: () => boolean, what: string): Promise<unknown> => eventually(check, what);

describe('git provider change detection', () => {
  const open: GitProvider[] = [];
  const dirs: string[] = [];
  let dir: string;
  let provider: GitProvider;
  let events: string[];

  beforeEach(() => {
    dir = makeRepo({ 'README.md': 'one\n', 'src/a.txt': 'a\n', 'src/b.txt': 'b\n' });
    dirs.push(dir);
    provider = gitProvider({ path: dir, pollIntervalMs: POLL_MS });
    open.push(provider);
    events = [];
  });
  afterAll(async () => {
    await Promise.all(open.map((p) => p.close()));
    dirs.forEach(removeDir);
  });

  const watch = (path: string, ref = 'main'): Promise<() => void> =>
    Promise.resolve(
      provider.watch!(`${provider.root}${ref}/${path}`, () => events.push(`${ref}:${path}`)),
    );
  const listen = (): Promise<() => void> =>
    Promise.resolve(provider.onListChanged!(() => events.push('list')));

  it('fires updated for a subscribed file whose blob changed, and for no other', async () => {
    const stops = [await watch('README.md'), await watch('src/a.txt'), await listen()];
    commit(dir, { 'README.md': 'two\n' }, 'change readme');
    await waitFor(() => events.includes('main:README.md'), 'the README update');
    // A commit that changes nothing watched fires nothing: a later change to a watched file (the
    // marker) is the next and only event.
    commit(dir, { 'src/b.txt': 'b2\n' }, 'change b');
    commit(dir, { 'src/a.txt': 'a2\n' }, 'change a (the marker)');
    await waitFor(() => events.includes('main:src/a.txt'), 'the marker update of src/a.txt');
    expect(events).toEqual(['main:README.md', 'main:src/a.txt']);
    stops.forEach((stop) => stop());
  });

  it('fires list_changed when the default branch file set changes, and updated when a reset moves the branch back', async () => {
    const stops = [await watch('README.md'), await listen()];
    const before = git(dir, 'rev-parse', 'HEAD');
    commit(dir, { 'new.txt': 'new\n' }, 'add a file');
    await waitFor(() => events.includes('list'), 'list_changed after an added file');
    expect(events).toEqual(['list']); // a duplicate would show in the next step's three events
    commit(dir, { 'README.md': 'three\n', 'src/a.txt': null }, 'change and delete');
    await waitFor(() => events.length === 3, 'update and list change');
    expect(events.slice(1).sort()).toEqual(['list', 'main:README.md']);
    git(dir, 'reset', '-q', '--hard', before);
    await waitFor(() => events.length === 5, 'update and list change after reset');
    expect(events.slice(3).sort()).toEqual(['list', 'main:README.md']);
    stops.forEach((stop) => stop());
  });

  it('watches at the ref named in the URI: other branches moving fire nothing', async () => {
    git(dir, 'branch', 'feature/x');
    const stop = await watch('README.md', 'feature%2Fx');
    commit(dir, { 'README.md': 'main only\n' }, 'main moves');
    expect(events).toEqual([]); // and main's move comes before the marker below, so would precede it
    git(dir, 'checkout', '-q', 'feature/x');
    commit(dir, { 'README.md': 'feature moves\n' }, 'feature moves');
    await waitFor(() => events.length === 1, 'the feature update');
    expect(events).toEqual(['feature%2Fx:README.md']);
    stop();
  });

  it('fires history views when their ref moves; commit views never change', async () => {
    const changes: string[] = [];
    const stopLog = await provider.watch!(`${provider.root}log/main/src`, () =>
      changes.push('log'),
    );
    const head = git(dir, 'rev-parse', 'HEAD');
    const stopCommit = await provider.watch!(`${provider.root}commits/${head}`, () =>
      changes.push('commit'),
    );
    commit(dir, { 'src/c.txt': 'c\n' }, 'add c');
    await waitFor(() => changes.includes('log'), 'the history update');
    commit(dir, { 'src/d.txt': 'd\n' }, 'add d (the marker)');
    await waitFor(() => changes.length >= 2, 'the marker history update');
    expect(changes).toEqual(['log', 'log']);
    stopLog();
    stopCommit();
  });

  it('refuses to watch a missing or hostile URI, and starts nothing', async () => {
    for (const uri of [
      'main/nope.txt',
      'no-branch/README.md',
      '-x/README.md',
      'main/-x',
      `commits/${'0'.repeat(40)}`,
    ]) {
      await expectNotFound(
        Promise.resolve(provider.watch!(`${provider.root}${uri}`, () => undefined)),
      );
    }
    expect(provider.watchStats()).toEqual({ watches: 0, listListeners: 0, polling: false });
  });

  it('stops polling when the last watcher leaves', async () => {
    const stopA = await watch('README.md');
    const stopB = await listen();
    expect(provider.watchStats()).toMatchObject({ watches: 1, listListeners: 1, polling: true });
    stopA();
    expect(provider.watchStats().polling).toBe(true);
    stopB();
    await waitFor(() => !provider.watchStats().polling, 'polling to stop');
    expect(provider.watchStats()).toEqual({ watches: 0, listListeners: 0, polling: false });
    // Nothing polls any more (above), so nothing is left that could fire for this commit.
    commit(dir, { 'README.md': 'unwatched\n' }, 'nobody listens');
    expect(events).toEqual([]);
  });

  it('fails only its own resources while the repository is gone, and recovers when it returns', async () => {
    const other = makeRepo({ 'x.txt': 'x\n' });
    dirs.push(other);
    const unaffected = gitProvider({ path: other });
    open.push(unaffected);
    const stops = [await watch('README.md'), await listen()];
    const away = `${dir}-away`;
    renameSync(dir, away);
    const error = await rejection(provider.read(`${provider.root}main/README.md`, ctx()));
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as UnavailableError).data).toMatchObject({
      uri: `${provider.root}main/README.md`,
    });
    expect((error as UnavailableError).message).toMatch(/repository is missing/);
    // The list fails as unavailable too: the registry's merged list skips this source and names it.
    expect(await rejection(provider.list(undefined, 10, ctx()))).toBeInstanceOf(UnavailableError);
    expect(
      (await unaffected.read(`${unaffected.root}main/x.txt`, ctx())).contents[0],
    ).toMatchObject({ text: 'x\n' });
    await waitFor(() => events.includes('list'), 'list_changed when the repository went missing');
    // Changed while away: noticed on return.
    commit(away, { 'README.md': 'changed while away\n' }, 'away');
    renameSync(away, dir);
    await waitFor(
      () => events.filter((e) => e === 'list').length === 2 && events.includes('main:README.md'),
      'list_changed and the update on return',
    );
    expect(
      (await provider.read(`${provider.root}main/README.md`, ctx())).contents[0],
    ).toMatchObject({ text: 'changed while away\n' });
    expect((await provider.list(undefined, 10, ctx())).items.map((i) => i.title)).toEqual([
      'README.md',
      'src/a.txt',
      'src/b.txt',
    ]);
    stops.forEach((stop) => stop());
  });

  it('serves a repository re-created at the same path with a fresh object reader', async () => {
    expect(
      (await provider.read(`${provider.root}main/README.md`, ctx())).contents[0],
    ).toMatchObject({ text: 'one\n' });
    const firstPid = provider.readerPid();
    rmSync(dir, { recursive: true, force: true });
    await rejection(provider.read(`${provider.root}main/README.md`, ctx()));
    const again = makeRepo({ 'README.md': 'reborn\n' });
    dirs.push(again);
    renameSync(again, dir);
    expect(
      (await provider.read(`${provider.root}main/README.md`, ctx())).contents[0],
    ).toMatchObject({ text: 'reborn\n' });
    expect(provider.readerPid()).not.toBe(firstPid);
  });

  it('restarts the object reader when it dies, failing only what was in flight', async () => {
    expect(
      (await provider.read(`${provider.root}main/README.md`, ctx())).contents[0],
    ).toMatchObject({ text: 'one\n' });
    const pid = provider.readerPid()!;
    process.kill(pid, 'SIGKILL');
    await waitFor(
      () => provider.readerPid() === undefined,
      'the provider to notice its reader died',
    );
    expect(
      (await provider.read(`${provider.root}main/src/a.txt`, ctx())).contents[0],
    ).toMatchObject({ text: 'a\n' });
    expect(provider.readerPid()).not.toBe(pid);
    expect(provider.readerStarts()).toBe(2);
  });
});

describe('git object reader', () => {
  const dir = makeRepo({ 'big.txt': 'x'.repeat(100_000), 'small.txt': 'small\n' });
  afterAll(() => removeDir(dir));
  const gitDir = `${dir}/.git`;
  const reader = (options: { maxPending?: number } = {}): CatFile =>
    new CatFile({ cwd: gitDir, env: gitEnv({ GIT_DIR: gitDir }), ...options });

  it('skips the bytes of an object over its bound and answers the next request correctly', async () => {
    const cat = reader();
    try {
      const big = git(dir, 'rev-parse', 'HEAD:big.txt');
      const small = git(dir, 'rev-parse', 'HEAD:small.txt');
      const [tooLarge, after] = await Promise.allSettled([
        cat.contents(big, 1000),
        cat.contents(small, 1000),
      ]);
      expect(
        tooLarge.status === 'rejected' &&
          tooLarge.reason instanceof ObjectTooLarge &&
          tooLarge.reason.info.size === 100_000,
      ).toBe(true);
      expect(after.status === 'fulfilled' && after.value?.data.toString()).toBe('small\n');
      expect(await cat.info('0'.repeat(40))).toBeUndefined();
      await expect(cat.info('HEAD\n--batch')).rejects.toThrow(/invalid object name/);
      expect(cat.starts).toBe(1);
    } finally {
      cat.stop(true);
    }
  });

  it('bounds the requests in flight', async () => {
    const cat = reader({ maxPending: 2 });
    try {
      const results = await Promise.allSettled([
        cat.info('HEAD'),
        cat.info('HEAD'),
        cat.info('HEAD'),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
      expect(String((results[2] as PromiseRejectedResult).reason)).toMatch(
        /too many git object reads in flight/,
      );
    } finally {
      cat.stop(true);
    }
  });

  it('answers an aborted read with the abort reason', async () => {
    const provider = gitProvider({ path: dir });
    try {
      const controller = new AbortController();
      controller.abort(new Error('cancelled by the test'));
      await expect(
        provider.read(`${provider.root}main/small.txt`, { signal: controller.signal }),
      ).rejects.toThrow('cancelled by the test');
    } finally {
      await provider.close();
    }
  });
});
