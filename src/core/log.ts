/**
 * The logger contract the core and providers log through. The `server` layer supplies a pino
 * logger writing to stderr (stdout carries the protocol over stdio); tests may supply a silent one.
 */
export interface LogFn {
  (message: string): void;
  (fields: Record<string, unknown>, message?: string): void;
}

export interface Logger {
  error: LogFn;
  warn: LogFn;
  info: LogFn;
  debug: LogFn;
}

/** The levels a logger can be set to (pino's). */
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export const LOG_LEVELS: readonly LogLevel[] = [
  'fatal',
  'error',
  'warn',
  'info',
  'debug',
  'trace',
  'silent',
];

const noop: LogFn = () => undefined;

/** A logger that drops everything. */
export const silentLogger: Logger = { error: noop, warn: noop, info: noop, debug: noop };
