/**
 * The server's own log records, routed to the MCP clients that asked for them (the `logging`
 * capability; deprecated as of 2026-07-28, still served in both eras). A record is sent as
 * `notifications/message` at the MCP level its logger level maps to (debug, info, warning, error),
 * only to clients whose principal no access rule restricts (a record can name any source, path or
 * internal error):
 *
 * - a record made while a request is handled goes to that request's client only, on the request's
 *   own stream: on the 2026-07-28 wire when the request carries `_meta["io.modelcontextprotocol/
 *   logLevel"]` at or below it (never without it, as the spec requires); in the 2025 era when the
 *   connection (stdio connection, HTTP session) set a level with `logging/setLevel` at or below it;
 * - a record made outside any request (a source failing, a watch lost) goes to every 2025-era
 *   connection that set a level at or below it.
 *
 * The records go to clients whatever the level of the process log on stderr. Each carries the
 * message and its fields, errors reduced to their name, message and code; a record too large or
 * not JSON is sent as its message alone. Sending never logs (a failed send is dropped), so a
 * record cannot loop back into itself.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { LogFn, Logger } from '../core/log.js';
import type { Principal } from '../core/principal.js';
import { definedProps } from '../core/defined.js';

/** MCP's log levels (RFC 5424), least severe first. */
export const MCP_LOG_LEVELS = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
] as const;
export type McpLogLevel = (typeof MCP_LOG_LEVELS)[number];

/** The MCP level of each logger method. */
const LEVEL_OF = { debug: 'debug', info: 'info', warn: 'warning', error: 'error' } as const;
type Method = keyof typeof LEVEL_OF;

/** A record's data is sent whole up to this size (JSON characters); beyond it, its message alone. */
const MAX_DATA_CHARS = 16_384;

/**
 * A client records go to: one request's (at the level the request or its connection set), or a
 * 2025-era connection that set a level (records made outside any request).
 */
export interface LogSink {
  /** The lowest level the client wants; undefined: none. */
  threshold(): McpLogLevel | undefined;
  /** Who the client is: a principal some access rule restricts hears no server record. */
  principal(): Principal;
  send(level: McpLogLevel, data: unknown): Promise<void>;
}

export function isMcpLogLevel(value: unknown): value is McpLogLevel {
  return typeof value === 'string' && (MCP_LOG_LEVELS as readonly string[]).includes(value);
}

/** Whether a record at `level` passes `threshold`. */
export function passes(level: McpLogLevel, threshold: McpLogLevel | undefined): boolean {
  return (
    threshold !== undefined && MCP_LOG_LEVELS.indexOf(level) >= MCP_LOG_LEVELS.indexOf(threshold)
  );
}

export class ClientLogRouter {
  private readonly requests = new AsyncLocalStorage<LogSink>();
  private readonly connections = new Set<LogSink>();

  /**
   * @param mayHear Whether a client's principal may receive the server's records (true only where
   * no access rule is in force for it).
   */
  constructor(private readonly mayHear: (principal: Principal) => boolean) {}

  /**
   * A logger that logs to `base` as before and routes each record to the clients that asked for
   * it. Every other property of `base` (a settable `level`) reads and writes through.
   */
  tee<L extends Logger>(base: L): L {
    const methods: Record<Method, LogFn> = {
      debug: this.method(base, 'debug'),
      info: this.method(base, 'info'),
      warn: this.method(base, 'warn'),
      error: this.method(base, 'error'),
    };
    return new Proxy(base, {
      get: (target, key, receiver) =>
        Object.hasOwn(methods, key) ? methods[key as Method] : Reflect.get(target, key, receiver),
    });
  }

  /** Runs `work` as one request's: records it makes go to `sink`. */
  inRequest<T>(sink: LogSink, work: () => T): T {
    return this.requests.run(sink, work);
  }

  /**
   * Runs `work` as a request whose records go to no client: the direct read paths (mcp/direct/),
   * which answer without the SDK's handler context, so a read's records never reach another client.
   */
  quietly<T>(work: () => T): T {
    return this.requests.run(QUIET, work);
  }

  /** Adds a connection that set a level; returns the function that removes it. */
  addConnection(sink: LogSink): () => void {
    this.connections.add(sink);
    return () => void this.connections.delete(sink);
  }

  private method(base: Logger, name: Method): LogFn {
    const write = base[name].bind(base) as (...args: unknown[]) => void;
    const level = LEVEL_OF[name];
    return ((...args: unknown[]): void => {
      write(...args);
      this.route(level, args);
    }) as LogFn;
  }

  private route(level: McpLogLevel, args: unknown[]): void {
    const request = this.requests.getStore();
    if (request !== undefined) {
      if (passes(level, request.threshold()) && this.mayHear(request.principal()))
        void request.send(level, dataOf(args)).catch(drop);
      return;
    }
    if (this.connections.size === 0) return;
    let data: unknown;
    for (const connection of this.connections) {
      if (!passes(level, connection.threshold()) || !this.mayHear(connection.principal())) continue;
      data ??= dataOf(args);
      void connection.send(level, data).catch(drop);
    }
  }
}

const QUIET: LogSink = {
  threshold: () => undefined,
  principal: () => {
    throw new Error('a quiet request has no client');
  },
  send: () => Promise.resolve(),
};

function drop(): void {
  // A client gone or a stream closed: the record was for it alone.
}

/** `{ message, ...fields }` of a logger call (`(message)` or `(fields, message?)`), JSON-safe. */
export function dataOf(args: readonly unknown[]): unknown {
  const [first, second] = args;
  if (typeof first === 'string') return { message: first };
  const fields =
    first !== null && typeof first === 'object' ? (first as Record<string, unknown>) : {};
  const data: Record<string, unknown> = {};
  if (typeof second === 'string') data['message'] = second;
  for (const [key, value] of Object.entries(fields))
    data[key] = value instanceof Error ? errorOf(value) : value;
  let json: string | undefined;
  try {
    json = JSON.stringify(data);
  } catch {
    json = undefined;
  }
  if (json === undefined || json.length > MAX_DATA_CHARS)
    return { message: typeof second === 'string' ? second : 'log record' };
  return JSON.parse(json) as unknown;
}

function errorOf(error: Error): Record<string, unknown> {
  const code = (error as { code?: unknown }).code;
  return {
    name: error.name,
    message: error.message,
    ...definedProps({
      code: typeof code === 'string' || typeof code === 'number' ? code : undefined,
    }),
  };
}
