/**
 * The process logger: pino writing JSON lines to stderr, never stdout (stdout is the protocol over
 * stdio).
 */
import pino from 'pino';
import type { Logger, LogLevel } from '../core/log.js';

export { LOG_LEVELS, type LogLevel } from '../core/log.js';

export function createLogger(level: LogLevel = 'info'): Logger {
  return pino({ level, base: { name: 'reservoir' } }, pino.destination({ fd: 2, sync: true }));
}
