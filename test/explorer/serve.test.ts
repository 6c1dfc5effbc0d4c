// The explorer's files over real HTTP: `/` redirects to `/ui/`, the page and its assets come from
// the package with a strict Content-Security-Policy, nothing outside dist/ui/ is reachable, the Host
// check applies as on /mcp, and `--no-ui` / `server.http.ui: false` turn it all off.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UI_CSP } from '../../src/http/ui.js';
import { Cleanup, spawnHttpServer } from '../helpers/clients.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { rawHttp } from '../helpers/wire.js';
import { startExplorer, type Explorer } from './harness.js';

let dir: string;
let explorer: Explorer;
const cleanup = new Cleanup();

beforeAll(async () => {
  dir = makeTempDir('reservoir-explorer-');
  writeTree(dir, { 'docs/a.md': '# a\n' });
  explorer = await startExplorer({ root: join(dir, 'docs') });
});
afterAll(async () => {
  await cleanup.run();
  await explorer.close();
  removeTree(dir);
});

describe('the explorer at /ui/', () => {
  it('redirects / and /ui to /ui/', async () => {
    for (const path of ['/', '/ui']) {
      const response = await fetch(`${explorer.origin}${path}`, { redirect: 'manual' });
      expect(response.status).toBe(302);
      expect(response.headers.get('location')).toBe('/ui/');
    }
  });

  it('serves the page and its script, style and icon with a strict CSP: no inline script or style, no eval, nothing from another host', async () => {
    const page = await fetch(`${explorer.origin}/ui/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toBe(UI_CSP);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await page.text();
    expect(html).toContain('<script type="module" src="app.js"></script>');
    // No inline script or style in the page itself, and no URL naming another host.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|style=/);
    expect(html).not.toMatch(/https?:\/\//);
    for (const [asset, type] of [
      ['app.js', 'text/javascript; charset=utf-8'],
      ['app.css', 'text/css; charset=utf-8'],
      ['favicon.svg', 'image/svg+xml'],
    ] as const) {
      const response = await fetch(`${explorer.origin}/ui/${asset}`);
      expect(response.status, asset).toBe(200);
      expect(response.headers.get('content-type')).toBe(type);
      expect(response.headers.get('content-security-policy')).toBe(UI_CSP);
    }
  });

  it('redirects only GET and HEAD at /: a POST there is a 404', async () => {
    expect((await fetch(`${explorer.origin}/`, { method: 'POST', body: '{}' })).status).toBe(404);
  });

  it('answers HEAD without a body and refuses other methods with 405', async () => {
    const head = await fetch(`${explorer.origin}/ui/app.js`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get('content-length'))).toBeGreaterThan(1000);
    const post = await fetch(`${explorer.origin}/ui/app.js`, { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it.each([
    ['a missing file', '/ui/nope.js'],
    ['a parent directory', '/ui/../package.json'],
    ['an encoded parent directory', '/ui/%2e%2e/%2e%2e/package.json'],
    ['an encoded slash and parent', '/ui/..%2f..%2fpackage.json'],
    ['a dot file', '/ui/.e2e-build.lock'],
    ['a NUL byte', '/ui/app.js%00.css'],
  ])('answers %s with 404 and nothing from outside dist/ui', async (_what, path) => {
    const response = await rawHttp(`${explorer.origin}${path}`, { method: 'GET' });
    expect([400, 404]).toContain(response.status);
    expect(response.body).not.toContain('"name"');
  });

  it('refuses a foreign Host header as /mcp does (DNS rebinding)', async () => {
    const response = await rawHttp(`${explorer.origin}/ui/`, {
      method: 'GET',
      headers: { host: 'evil.example:80' },
    });
    expect(response.status).toBe(403);
  });

  it('is off unless asked for: a library endpoint without `ui` answers /ui/ with 404', async () => {
    const endpoint = await explorer.reservoir.listen({ port: 0 });
    const origin = new URL(endpoint.url).origin;
    expect((await fetch(`${origin}/ui/`)).status).toBe(404);
    expect((await fetch(`${origin}/`, { redirect: 'manual' })).status).toBe(404);
    await endpoint.close();
  });
});

describe('reservoir serve --http', () => {
  it('serves the explorer by default, and not with --no-ui', async () => {
    const on = await spawnHttpServer([join(dir, 'docs')], [], cleanup);
    expect((await fetch(new URL('/ui/', on.url))).status).toBe(200);
    const off = await spawnHttpServer([join(dir, 'docs')], ['--no-ui'], cleanup);
    expect((await fetch(new URL('/ui/', off.url))).status).toBe(404);
    expect((await fetch(new URL('/mcp', off.url), { method: 'GET' })).status).not.toBe(404);
  });

  it('does not serve it when the config says server.http.ui: false', async () => {
    const config = join(dir, 'reservoir.yaml');
    writeFileSync(
      config,
      `sources:\n  - type: files\n    root: ${join(dir, 'docs')}\nserver:\n  http:\n    port: 0\n    ui: false\n`,
    );
    const off = await spawnHttpServer([], ['--config', config], cleanup);
    expect((await fetch(new URL('/ui/', off.url))).status).toBe(404);
  });
});
