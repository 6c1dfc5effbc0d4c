/**
 * The process logger: pino writing JSON lines to stderr, never stdout (stdout is the protocol over
 * stdio). pino is loaded by the first logger made, so importing the library never loads it.
 */
import { createRequire } from 'node:module';
import type pino from 'pino';
import type { LogFn, Logger, LogLevel } from '../core/log.js';

export { LOG_LEVELS, type LogLevel } from '../core/log.js';

let pinoModule: typeof pino | undefined;
function loadPino(): typeof pino {
  pinoModule ??= createRequire(import.meta.url)('pino') as typeof pino;
  return pinoModule;
}

export function createLogger(level: LogLevel = 'info'): Logger {
  const make = loadPino();
  return make({ level, base: { name: 'reservoir' } }, make.destination({ fd: 2, sync: true }));
}

/** pino's level values: a method logs when its value is at least the logger's. */
const LEVEL_VALUES: Readonly<Record<LogLevel, number>> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Number.POSITIVE_INFINITY };

/** A logger whose level can be changed while it runs, as a pino logger's can. */
export type LevelledLogger = Logger & { level: LogLevel };

/**
 * Logs exactly as {@link createLogger}'s logger would, but makes that logger (loading pino) only
 * when a line is first logged at an enabled level: a server that logs nothing while it starts
 * answers its first request without paying for pino. `level` may be set at any time.
 */
export function createDeferredLogger(level: LogLevel = 'info'): LevelledLogger {
  let current = checkedLevel(level, `default level:${level} must be included in custom levels`);
  let made: LevelledLogger | undefined;
  const method = (name: 'error' | 'warn' | 'info' | 'debug'): LogFn =>
    ((...args: unknown[]): void => {
      if (LEVEL_VALUES[name] < LEVEL_VALUES[current]) return;
      made ??= createLogger(current) as LevelledLogger;
      (made[name] as (...line: unknown[]) => void)(...args);
    }) as LogFn;
  return {
    error: method('error'),
    warn: method('warn'),
    info: method('info'),
    debug: method('debug'),
    get level(): LogLevel {
      return current;
    },
    set level(next: LogLevel) {
      current = checkedLevel(next, `unknown level ${next}`);
      if (made !== undefined) made.level = next;
    },
  };
}

/** The level; an unknown one throws pino's error (`message`). */
function checkedLevel(level: LogLevel, message: string): LogLevel {
  if (!Object.hasOwn(LEVEL_VALUES, level)) throw new Error(message);
  return level;
}
