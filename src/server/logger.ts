/**
 * The process logger: pino writing JSON lines to stderr, never stdout (stdout is the protocol over
 * stdio).
 */
import pino from 'pino';
import type { Logger } from '../core/log.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function createLogger(level: LogLevel = 'info'): Logger {
  return pino({ level, base: { name: 'reservoir' } }, pino.destination({ fd: 2, sync: true }));
}
