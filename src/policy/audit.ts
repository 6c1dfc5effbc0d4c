/**
 * The audit log: one JSON line per operation — who, what, on which resource or tool, how it ended,
 * how many bytes, how long — and never content, argument values or secrets. Lines are buffered and
 * written on a short interval and on `close()`, to stderr or to a file rotated by size. The same
 * record is published on the `reservoir:operation` diagnostics channel for embedders.
 */
import { channel } from 'node:diagnostics_channel';
import { z } from 'zod';
import { silentLogger, type Logger } from '../core/log.js';
import { fileSink, stderrSink, type AuditSink } from './audit-sink.js';
import { parseOptions } from './options.js';
import { definedProps } from '../core/defined.js';

/** The diagnostics channel every operation record is published on (when it has subscribers). */
export const OPERATION_CHANNEL = 'reservoir:operation';
const operations = channel(OPERATION_CHANNEL);

/** One operation, as written to the log and published on {@link OPERATION_CHANNEL}. */
export interface OperationRecord {
  /** When the operation started, ISO 8601. */
  time: string;
  /** The principal's id. */
  principal: string;
  /** The principal's kind (`token`, `oauth`, `anonymous`, `local`): two kinds may share an id. */
  principalKind?: string;
  /** The MCP method, e.g. `resources/read`. */
  method: string;
  /** The resource, for `resources/*` methods (credentials in it redacted). */
  uri?: string;
  /** The tool or prompt, for the other methods. */
  name?: string;
  outcome: 'ok' | 'error';
  /** The error's code (`ReservoirError.code`, or `internal`), when the outcome is `error`. */
  code?: string;
  /** Bytes of content read. */
  bytes?: number;
  durationMs: number;
  /** The client's address, for requests refused by authentication (`method: 'http/authenticate'`). */
  address?: string;
}

/** What `record` accepts: a record whose `time` defaults to now. Other fields are ignored. */
type OptionalField = 'time' | 'principalKind' | 'uri' | 'name' | 'code' | 'bytes' | 'address';
export type OperationEntry = Omit<OperationRecord, OptionalField> & {
  [K in OptionalField]?: OperationRecord[K] | undefined;
};

const common = {
  /** Buffered lines are written at least this often. @default 1000 */
  flushIntervalMs: z.int().min(1).max(60_000).default(1000),
};

/** Options of {@link createAuditLog}, discriminated on `sink`. */
export const auditOptions = z.discriminatedUnion('sink', [
  z.strictObject({ sink: z.literal('stderr'), ...common }),
  z.strictObject({
    sink: z.literal('file'),
    /** The live file; rotated ones are `path.1` (newest) … `path.<keep>`. */
    path: z.string().min(1),
    /** Size at which the file is rotated. @default 10485760 (10 MiB) */
    maxBytes: z
      .int()
      .min(1024)
      .default(10 * 1024 * 1024),
    /** Rotated files kept besides the live one. @default 5 */
    keep: z.int().min(1).max(100).default(5),
    ...common,
  }),
  /** No log lines; records still reach diagnostics-channel subscribers. */
  z.strictObject({ sink: z.literal('none'), ...common }),
]);

export type AuditOptions = z.input<typeof auditOptions>;

export interface AuditLog {
  record(entry: OperationEntry): void;
  /** Writes what is buffered and closes the file; records after this reach the channel only. */
  close(): Promise<void>;
}

/** Lines buffered beyond this are written at once rather than at the next interval. */
const FLUSH_AT_BYTES = 64 * 1024;

/**
 * Builds the audit log; options are checked now (ConfigError on `audit.<field>`).
 *
 * @example
 * const audit = createAuditLog({ sink: 'file', path: '/var/log/reservoir/audit.log', maxBytes: 50_000_000, keep: 10 });
 * audit.record({ principal: 'alice', principalKind: 'token', method: 'resources/read', uri, outcome: 'ok', bytes: 512, durationMs: 3.2 });
 * await audit.close(); // at shutdown: writes what is buffered
 */
export function createAuditLog(
  options: AuditOptions = { sink: 'stderr' },
  deps: { logger?: Logger } = {},
): AuditLog {
  const parsed = parseOptions(auditOptions, options, 'audit');
  const logger = deps.logger ?? silentLogger;
  const sink: AuditSink | undefined =
    parsed.sink === 'file'
      ? fileSink(parsed.path, parsed.maxBytes, parsed.keep)
      : parsed.sink === 'stderr'
        ? stderrSink()
        : undefined;
  let buffer: string[] = [];
  let buffered = 0;
  let writing = Promise.resolve();
  let closed = false;

  const flush = (): Promise<void> => {
    if (sink === undefined || buffer.length === 0) return writing;
    const lines = buffer;
    buffer = [];
    buffered = 0;
    writing = writing
      .then(() => sink.write(lines))
      .catch((error: unknown) =>
        logger.error({ err: error, lines: lines.length }, 'audit log write failed; lines dropped'),
      );
    return writing;
  };
  const timer =
    sink === undefined
      ? undefined
      : setInterval(() => void flush(), parsed.flushIntervalMs).unref();

  return {
    record(entry) {
      const record = toRecord(entry);
      if (operations.hasSubscribers) operations.publish(record);
      if (sink === undefined || closed) return;
      const line = `${JSON.stringify(record)}\n`;
      buffer.push(line);
      buffered += line.length;
      if (buffered >= FLUSH_AT_BYTES) void flush();
    },
    async close() {
      if (closed) return writing;
      closed = true;
      clearInterval(timer);
      await flush();
      await sink?.close();
    },
  };
}

/** Copies the allowed fields only, in a fixed order, redacting credentials in the URI. */
export function toRecord(entry: OperationEntry): OperationRecord {
  const outcome: OperationRecord['outcome'] = entry.outcome === 'ok' ? 'ok' : 'error';
  // Fields the entry lacks (or holds with the wrong type) are left out: undefined drops them.
  return definedProps({
    time: typeof entry.time === 'string' ? entry.time : new Date().toISOString(),
    principal: clip(String(entry.principal)),
    principalKind:
      typeof entry.principalKind === 'string' ? clip(entry.principalKind, 16) : undefined,
    method: clip(String(entry.method)),
    uri: typeof entry.uri === 'string' ? redactUri(entry.uri) : undefined,
    name: typeof entry.name === 'string' ? clip(entry.name) : undefined,
    outcome,
    code:
      outcome === 'ok'
        ? undefined
        : typeof entry.code === 'string'
          ? clip(entry.code, 64)
          : 'internal',
    bytes:
      typeof entry.bytes === 'number' && Number.isFinite(entry.bytes) ? entry.bytes : undefined,
    durationMs: Math.round(Number(entry.durationMs) * 10) / 10,
    address: typeof entry.address === 'string' ? clip(entry.address, 64) : undefined,
  });
}

const SECRET_PARAM = /token|secret|passw|pwd|key|auth|sig|credential|session|cookie/i;

/** Drops user:password and blanks query values whose names look like credentials. */
export function redactUri(uri: string): string {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return clip(uri);
  }
  let changed = false;
  if (url.username !== '' || url.password !== '') {
    url.username = '';
    url.password = '';
    changed = true;
  }
  for (const name of new Set(url.searchParams.keys())) {
    if (SECRET_PARAM.test(name)) {
      url.searchParams.set(name, 'redacted');
      changed = true;
    }
  }
  return clip(changed ? url.href : uri);
}

function clip(value: string, max = 1024): string {
  return value.length <= max ? value : `${value.slice(0, max)}…`;
}
