/**
 * Where the MCP edge applies the per-caller blob caps (core/blob-caps.ts): who is reading (the
 * principal, and the client as it named itself — at `initialize` on a 2025-era connection, in the
 * request's `_meta` envelope on 2026-07-28), and a tool result whose embedded resources pass the
 * cap turned into an `isError` result that says so.
 */
import { CLIENT_INFO_META_KEY, type Server } from '@modelcontextprotocol/server';
import type { BlobCaps, Reader } from '../core/blob-caps.js';
import { isReservoirError } from '../core/errors.js';
import type { Principal } from '../core/principal.js';
import type { ToolResult } from '../core/tools.js';

/** The principal and client behind a request (the client as its `clientInfo` named it). */
export function readerOf(server: Server, envelope: unknown, principal: Principal): Reader {
  const named = (envelope as Record<string, unknown> | undefined)?.[CLIENT_INFO_META_KEY] as
    { name?: unknown; version?: unknown } | undefined;
  const info =
    typeof named?.name === 'string'
      ? { name: named.name, version: typeof named.version === 'string' ? named.version : undefined }
      : server.getClientVersion();
  return {
    principal,
    client: info === undefined ? undefined : { name: info.name, version: info.version },
  };
}

/**
 * The tool result, or an `isError` result when one of its embedded resources, images or audio
 * passes the caller's cap (an image or audio block is named by the result's resource link).
 */
export function capToolResult(result: ToolResult, caps: BlobCaps, reader: Reader): ToolResult {
  const link = result.content.find((block) => block.type === 'resource_link');
  const named = link?.type === 'resource_link' ? link.uri : 'the media in this result';
  const contents = result.content.flatMap((block) =>
    block.type === 'resource'
      ? [block.resource]
      : block.type === 'image' || block.type === 'audio'
        ? [{ uri: named, mimeType: block.mimeType, blob: block.data }]
        : [],
  );
  if (contents.length === 0) return result;
  try {
    caps.check(contents, reader);
    return result;
  } catch (error) {
    if (!isReservoirError(error)) throw error;
    return { content: [{ type: 'text', text: error.message }], isError: true };
  }
}
