/**
 * The server's identity on the 2026-07-28 wire. Servers SHOULD identify themselves in every
 * result's `_meta` (`io.modelcontextprotocol/serverInfo`: "server name and version"); there it is
 * the name and version alone. `server/discover` — where a host looks for what to show — carries the
 * whole `Implementation`, icons included, as does `initialize` in the 2025 era. The icons are two
 * SVG `data:` URIs (~1 KiB): stamped on every result, they made a 4 KiB read's answer a quarter
 * larger for nothing.
 */
import {
  SERVER_INFO_META_KEY,
  type Implementation,
  type ServerContext,
  type ServerOptions,
} from '@modelcontextprotocol/server';
import { CheckedServer } from './params.js';
import { definedProps } from '../core/defined.js';

/** What every 2026-07-28 result carries as the server's identity. */
export function resultIdentity(info: Implementation): Implementation {
  return {
    name: info.name,
    version: info.version,
    ...definedProps({ title: info.title }),
  };
}

type Handler = (
  request: { method: string; params?: unknown },
  ctx: ServerContext,
) => Promise<unknown>;

/** The checked server, stamping the short identity on results and the whole one on `server/discover`. */
export class IdentifiedServer extends CheckedServer {
  private readonly identity: Implementation;
  private readonly shortIdentity: Implementation;

  constructor(identity: Implementation, options?: ServerOptions) {
    super(identity, options);
    this.identity = identity;
    this.shortIdentity = resultIdentity(identity);
  }

  protected override _outboundServerInfo(): Implementation {
    return this.shortIdentity;
  }

  protected override _wrapHandler(
    method: string,
    handler: Parameters<CheckedServer['_wrapHandler']>[1],
  ): ReturnType<CheckedServer['_wrapHandler']> {
    const inner = super._wrapHandler(method, handler);
    if (method !== 'server/discover') return inner;
    const run = inner as unknown as Handler;
    // A result whose `_meta` already names the server keeps it (the SDK stamps only where it is absent).
    const wrapped: Handler = async (request, ctx) => {
      const result = (await run(request, ctx)) as Record<string, unknown>;
      const meta = (result['_meta'] ?? {}) as Record<string, unknown>;
      return { ...result, _meta: { ...meta, [SERVER_INFO_META_KEY]: this.identity } };
    };
    return wrapped as unknown as ReturnType<CheckedServer['_wrapHandler']>;
  }
}
