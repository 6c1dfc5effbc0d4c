/**
 * The explorer's static assets at `/ui/` (and `/` redirecting there), served from the package's
 * `dist/ui/` (built by `npm run build`). The page is a client of this server's own `/mcp`: these
 * files hold no data, so they need no credentials; every byte of data the page shows comes through
 * `/mcp` with the user's token. Every answer carries a strict Content-Security-Policy: scripts,
 * styles, images and connections from this origin only (images also `data:` and `blob:`, for
 * previews), no inline script or style, no `eval`, no framing by other sites.
 */
import { readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const UI_PATH = '/ui/';

/** The policy every explorer answer carries. */
export const UI_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.map': 'application/json',
};

/** Where the built bundle lives: `<package>/dist/ui/`, from both `src/http/` and `dist/http/`. */
export function defaultUiDirectory(): string {
  return fileURLToPath(new URL('../../dist/ui/', import.meta.url));
}

export interface UiAssets {
  /** Answers GET/HEAD for `/`, `/ui` and `/ui/…`; returns false for any other path. */
  handle(path: string, req: IncomingMessage, res: ServerResponse): boolean;
}

/**
 * Serves the bundle in `directory`. Files are read once and kept (the bundle is a few hundred KB and
 * never changes while the process runs); a missing bundle answers 503 naming the build step.
 */
export function uiAssets(directory = defaultUiDirectory(), onPageOpened?: () => void): UiAssets {
  const cache = new Map<string, Buffer | null>();
  const load = (relative: string): Buffer | null => {
    let body = cache.get(relative);
    if (body !== undefined) return body;
    const path = normalize(join(directory, relative));
    body = null;
    if (path.startsWith(normalize(directory.endsWith(sep) ? directory : directory + sep))) {
      try {
        if (statSync(path).isFile()) body = readFileSync(path);
      } catch {
        body = null;
      }
    }
    if (cache.size < 256) cache.set(relative, body);
    return body;
  };

  return {
    handle(path, req, res) {
      if (path === '/' || path === '/ui') {
        // Only a browser's navigation is redirected; anything else at `/` stays a 404.
        if (req.method !== 'GET' && req.method !== 'HEAD') return false;
        res.writeHead(302, { location: UI_PATH, 'content-security-policy': UI_CSP }).end();
        return true;
      }
      if (!path.startsWith(UI_PATH)) return false;
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD' }).end();
        return true;
      }
      let relative: string;
      try {
        relative = decodeURIComponent(path.slice(UI_PATH.length)) || 'index.html';
      } catch {
        res.writeHead(400).end();
        return true;
      }
      if (
        relative.includes('\0') ||
        relative.split('/').some((segment) => segment === '..' || segment.startsWith('.'))
      ) {
        res.writeHead(404, securityHeaders('text/plain; charset=utf-8')).end('Not found');
        return true;
      }
      const body = load(relative);
      if (body === null) {
        if (load('index.html') === null) {
          res
            .writeHead(503, securityHeaders('text/plain; charset=utf-8'))
            .end('The explorer is not built: run `npm run build`.');
        } else {
          res.writeHead(404, securityHeaders('text/plain; charset=utf-8')).end('Not found');
        }
        return true;
      }
      const type = TYPES[extname(relative)] ?? 'application/octet-stream';
      const headers = {
        ...securityHeaders(type),
        'content-length': String(body.length),
        // index.html names the current bundle; the rest is content-stable per build.
        'cache-control': relative === 'index.html' ? 'no-cache' : 'public, max-age=300',
      };
      res.writeHead(200, headers);
      res.end(req.method === 'HEAD' ? undefined : body);
      if (relative === 'index.html' && req.method === 'GET') onPageOpened?.();
      return true;
    },
  };
}

function securityHeaders(type: string): Record<string, string> {
  return {
    'content-type': type,
    'content-security-policy': UI_CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
  };
}
