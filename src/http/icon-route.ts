/**
 * `/ui/icons/KIND.svg`: the pictures resources' MCP `icons` name over HTTP (src/mcp/resource-icons.ts).
 * Served on every HTTP listener, explorer on or off, because `resources/list` names them on every
 * one. They hold no data and need no credentials; the Host check applies as on `/mcp`. Hosts show
 * them from their own pages, so (unlike the explorer's files) they may be embedded cross-origin.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  RESOURCE_ICONS_PATH,
  RESOURCE_KINDS,
  resourceIconSvg,
  type ResourceKind,
} from '../mcp/resource-icons.js';

const BODIES = new Map<string, Buffer>(
  RESOURCE_KINDS.map((kind: ResourceKind) => [
    `${kind}.svg`,
    Buffer.from(resourceIconSvg(kind), 'utf8'),
  ]),
);

/** Answers a path under `/ui/icons/`; returns false for any other path. */
export function serveResourceIcon(
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
): boolean {
  if (!path.startsWith(RESOURCE_ICONS_PATH)) return false;
  const headers = {
    'content-security-policy': "default-src 'none'",
    'x-content-type-options': 'nosniff',
    'cross-origin-resource-policy': 'cross-origin',
  };
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { ...headers, allow: 'GET, HEAD' }).end();
    return true;
  }
  const body = BODIES.get(path.slice(RESOURCE_ICONS_PATH.length));
  if (body === undefined) {
    res
      .writeHead(404, { ...headers, 'content-type': 'text/plain; charset=utf-8' })
      .end(`No such icon; the icons are ${RESOURCE_KINDS.map((k) => `${k}.svg`).join(', ')}`);
    return true;
  }
  res.writeHead(200, {
    ...headers,
    'content-type': 'image/svg+xml',
    'content-length': String(body.length),
    'cache-control': 'public, max-age=86400',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
  return true;
}
