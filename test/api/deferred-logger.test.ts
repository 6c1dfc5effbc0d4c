// The CLI's logger writes exactly what createLogger's pino logger writes, but loads pino only when
// a line is first logged at an enabled level, so a server that logs nothing while it starts does
// not pay for pino before its first answer. Run in a child process: both loggers write to fd 2.
import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, REPO_ROOT } from '../helpers/build.js';

beforeAll(() => ensureBuilt());

interface Run {
  /** What the script printed with console.log. */
  stdout: string[];
  /** The lines logged (stderr), parsed, without their time. */
  logged: Record<string, unknown>[];
}

/** Runs a script that has createDeferredLogger, createLogger and `loaded()` (whether pino is loaded). */
function run(body: string): Run {
  const script = `
    import { createRequire } from 'node:module';
    import { createDeferredLogger, createLogger } from './dist/server/logger.js';
    const cache = createRequire(import.meta.url).cache;
    const loaded = () => Object.keys(cache).some((path) => /\\/node_modules\\/pino\\//.test(path));
    ${body}
  `;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  });
  if (child.status !== 0) throw new Error(`script failed (${child.status}): ${child.stderr}`);
  const lines = (text: string): string[] => text.split('\n').filter((line) => line !== '');
  const logged = lines(child.stderr).map((line) => {
    const { time: _time, ...rest } = JSON.parse(line) as Record<string, unknown>;
    return rest;
  });
  return { stdout: lines(child.stdout), logged };
}

describe('the deferred logger', () => {
  it('loads pino only when a line is first logged at an enabled level', () => {
    const { stdout } = run(`
      const logger = createDeferredLogger('warn');
      console.log(loaded());
      logger.info('dropped');
      logger.debug({ a: 1 }, 'dropped');
      console.log(loaded());
      logger.warn('kept');
      console.log(loaded());
    `);
    expect(stdout).toEqual(['false', 'false', 'true']);
  });

  it('writes what createLogger writes, and follows level changes', () => {
    const script = (make: string): string => `
      const logger = ${make}('info');
      logger.debug('hidden');
      logger.info({ why: 'test' }, 'shown');
      logger.error({ err: new Error('boom') }, 'failed');
      logger.level = 'debug';
      logger.debug('now shown');
      logger.level = 'error';
      logger.warn('hidden again');
      logger.error('still shown');
    `;
    const deferred = run(script('createDeferredLogger')).logged;
    const pino = run(script('createLogger')).logged;
    expect(deferred).toEqual(pino);
    expect(deferred.map((line) => line['msg'])).toEqual([
      'shown',
      'failed',
      'now shown',
      'still shown',
    ]);
    expect(deferred[0]).toMatchObject({ level: 30, name: 'reservoir', why: 'test' });
  });

  it('refuses an unknown level, as pino does', () => {
    const { stdout } = run(`
      const outcome = (make) => { try { make(); return 'ok'; } catch (error) { return error.message; } };
      console.log(outcome(() => createLogger('loud')));
      console.log(outcome(() => createDeferredLogger('loud')));
      console.log(outcome(() => { createLogger('info').level = 'loud'; }));
      console.log(outcome(() => { createDeferredLogger('info').level = 'loud'; }));
    `);
    const [made, deferred, set, deferredSet] = stdout;
    expect(deferred).toBe(made);
    expect(deferredSet).toBe(set);
    expect([made, set]).toEqual([
      'default level:loud must be included in custom levels',
      'unknown level loud',
    ]);
  });
});
