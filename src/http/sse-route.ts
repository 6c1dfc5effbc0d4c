/**
 * The routes of the 2024-11-05 HTTP+SSE transport, `GET /sse` and `POST /messages?sessionId=…`,
 * behind exactly what guards `/mcp`: the Host and Origin checks, the drain's refusal, the body cap
 * (413), authentication before any body is read (401 and the auth-failure limit), then the session
 * map (sse-sessions.ts) with its quotas.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isJsonContentType, type AuthInfo } from '@modelcontextprotocol/server';
import type { Logger } from '../core/log.js';
import type { AuthFailureGuard } from './auth-failures.js';
import type { Authenticator } from './auth.js';
import { readJsonBody } from './body.js';
import type { EndpointDrain } from './drain.js';
import { ANONYMOUS_AUTH, authenticateOrRefuse } from './request-auth.js';
import { MESSAGES_PATH, SSE_PATH, type SseSessions } from './sse-sessions.js';

export interface SseRoute {
  sessions: SseSessions;
  auth: Authenticator | undefined;
  guard: AuthFailureGuard | undefined;
  drainer: EndpointDrain;
  maxBodyBytes: number;
  logger: Logger;
}

/** Whether `path` is one of this transport's. */
export function isSsePath(path: string): boolean {
  return path === SSE_PATH || path === MESSAGES_PATH;
}

/** Serves one request to `/sse` or `/messages`; the Host and Origin checks have passed. */
export function serveSse(
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
  route: SseRoute,
): void {
  if (route.drainer.draining) return route.drainer.refuse(res);
  const method = path === SSE_PATH ? 'GET' : 'POST';
  if (req.method !== method) {
    res
      .writeHead(405, { allow: method, 'content-type': 'application/json' })
      .end(JSON.stringify(rpcBody(-32000, `Method not allowed: ${path} takes ${method}`)));
    return;
  }
  const declared = Number(req.headers['content-length']);
  if (method === 'POST' && Number.isFinite(declared) && declared > route.maxBodyBytes)
    return tooLarge(res, route.maxBodyBytes);
  // The stream is a notification stream (not waited for by the drain); a POST is counted until answered.
  route.drainer.track(req, res);
  serve(path, req, res, route).catch((error: unknown) => {
    route.logger.error({ err: error }, 'http handler failed');
    if (!res.headersSent) res.writeHead(500).end();
    else res.end();
  });
}

async function serve(
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
  route: SseRoute,
): Promise<void> {
  let authInfo: AuthInfo = ANONYMOUS_AUTH;
  if (route.auth !== undefined) {
    const accepted = await authenticateOrRefuse(req, res, route.auth, route.guard!);
    if (accepted === undefined) return;
    authInfo = accepted;
  }
  const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
  const request = new Request(url, { method: req.method!, headers: headersOf(req) });
  if (path === SSE_PATH) {
    await route.sessions.open(res, request, authInfo, req.socket.remoteAddress);
    return;
  }
  if (!isJsonContentType(req.headers['content-type'] ?? null)) {
    res
      .writeHead(415, { 'content-type': 'application/json' })
      .end(
        JSON.stringify(
          rpcBody(-32000, 'Unsupported Media Type: Content-Type must be application/json'),
        ),
      );
    return;
  }
  const body = await readJsonBody(req, route.maxBodyBytes);
  if (!body.ok) {
    if (body.status === 413) return tooLarge(res, route.maxBodyBytes);
    res.writeHead(body.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(rpcBody(body.code, body.message)));
    return;
  }
  const answer = route.sessions.post(
    url.searchParams.get('sessionId'),
    body.value,
    authInfo,
    request,
  );
  const headers: Record<string, string> = {};
  answer.headers.forEach((value, name) => (headers[name] = value));
  res.writeHead(answer.status, headers).end(Buffer.from(await answer.arrayBuffer()));
}

function tooLarge(res: ServerResponse, limit: number): void {
  res.writeHead(413, { 'content-type': 'application/json', connection: 'close' });
  res.end(JSON.stringify(rpcBody(-32600, `Request body too large (limit ${limit} bytes)`)));
}

function rpcBody(code: number, message: string): Record<string, unknown> {
  return { jsonrpc: '2.0', id: null, error: { code, message } };
}

function headersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  return headers;
}
