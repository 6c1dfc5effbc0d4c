/**
 * The process logger: pino writing to stderr, never stdout (stdout is the protocol over stdio) —
 * JSON lines, or, for a person at a terminal, pino-pretty's coloured lines with local times. pino
 * (and pino-pretty) are loaded by the first logger made, so importing the library never loads them.
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

/** `auto`: pretty when stderr is a terminal, JSON lines otherwise. */
export type LogFormat = 'auto' | 'pretty' | 'json';
export const LOG_FORMATS: readonly LogFormat[] = ['auto', 'pretty', 'json'];

/** Whether `format` means pretty lines here (`auto` asks whether stderr is a terminal). */
export function isPretty(format: LogFormat, stderrIsTty = process.stderr.isTTY === true): boolean {
  return format === 'pretty' || (format === 'auto' && stderrIsTty);
}

export function createLogger(level: LogLevel = 'info', format: LogFormat = 'json'): Logger {
  const make = loadPino();
  const options = { level, base: { name: 'reservoir' } };
  if (!isPretty(format)) return make(options, make.destination({ fd: 2, sync: true }));
  const pretty = createRequire(import.meta.url)('pino-pretty') as (
    options: Record<string, unknown>,
  ) => NodeJS.WritableStream;
  const stream = pretty({
    destination: 2,
    sync: true,
    // Colours only for a terminal (`--log-format pretty` into a file or pipe stays plain text).
    colorize: process.stderr.isTTY === true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,name',
    singleLine: true,
  });
  return make(options, stream);
}

/** pino's level values: a method logs when its value is at least the logger's. */
const LEVEL_VALUES: Readonly<Record<LogLevel, number>> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Number.POSITIVE_INFINITY,
};

/** A logger whose level can be changed while it runs, as a pino logger's can. */
export type LevelledLogger = Logger & { level: LogLevel };

/**
 * Logs exactly as {@link createLogger}'s logger would, but makes that logger (loading pino) only
 * when a line is first logged at an enabled level: a server that logs nothing while it starts
 * answers its first request without paying for pino. `level` may be set at any time.
 */
export function createDeferredLogger(
  level: LogLevel = 'info',
  format: LogFormat = 'json',
): LevelledLogger {
  let current = checkedLevel(level, `default level:${level} must be included in custom levels`);
  let made: LevelledLogger | undefined;
  const method = (name: 'error' | 'warn' | 'info' | 'debug'): LogFn =>
    ((...args: unknown[]): void => {
      if (LEVEL_VALUES[name] < LEVEL_VALUES[current]) return;
      made ??= createLogger(current, format) as LevelledLogger;
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
