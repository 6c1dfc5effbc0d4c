/**
 * Resources' MCP `icons` (issue 14, item 10), through the real SDK client: over HTTP every listed
 * resource names the icon of its MIME kind as a URL on the origin the client reached, and every
 * such URL resolves to an SVG served by Reservoir itself; over stdio, where there is no origin to
 * name, resources carry none by default (the templates and the server carry theirs) and the same
 * picture goes inline as a short `data:` URI when the config asks (`hints.resourceIcons: always`,
 * issue 28); `off` leaves them out on HTTP too.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Cleanup,
  connectHttp,
  connectStdio,
  ERAS,
  listAllPages,
  spawnHttpServer,
} from '../helpers/clients.js';
import { CLI_PATH, ensureBuilt } from '../helpers/build.js';
import {
  inlineResourceIcon,
  MAX_INLINE_ICON_BYTES,
  resourceKind,
  type ResourceKind,
} from '../../src/mcp/resource-icons.js';

const FILES: Record<string, string> = {
  'notes.md': 'markdown',
  'photo.png': 'image',
  'data.json': 'json',
  'rows.csv': 'csv',
  'main.ts': 'code',
  'readme.txt': 'text',
  'blob.bin': 'binary',
};

let dir: string;
let configDir: string;
const cleanup = new Cleanup();

/** A config serving `dir` with `hints.resourceIcons` set to `mode` (its path). */
function configWith(mode: string): string {
  const path = join(configDir, `icons-${mode}.yaml`);
  writeFileSync(
    path,
    [
      'sources:',
      '  - type: files',
      `    root: ${JSON.stringify(dir)}`,
      'hints:',
      `  resourceIcons: ${mode}`,
      '',
    ].join('\n'),
  );
  return path;
}

beforeAll(async () => {
  await ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'reservoir-icons-'));
  configDir = mkdtempSync(join(tmpdir(), 'reservoir-icons-config-'));
  for (const name of Object.keys(FILES))
    writeFileSync(
      join(dir, name),
      name.endsWith('.bin') || name.endsWith('.png')
        ? Buffer.from([0x89, 0, 1, 2, 255])
        : `${name}\n`,
    );
});

afterAll(async () => {
  await cleanup.run();
  rmSync(dir, { recursive: true, force: true });
  rmSync(configDir, { recursive: true, force: true });
});

/** GET (or another method) on the server with an explicit Host header; resolves status, type and body. */
function get(
  url: string,
  options: { method?: string; host?: string } = {},
): Promise<{ status: number; type: string | undefined; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: options.method ?? 'GET',
        headers: { host: options.host ?? target.host },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body }),
        );
      },
    );
    req.once('error', reject);
    req.end();
  });
}

describe.each(ERAS)('resource icons over HTTP, %s era', (era) => {
  it('gives every listed resource the icon of its MIME kind on the origin the client reached, and every icon URL resolves to an SVG', async () => {
    const server = await spawnHttpServer([dir], ['--no-search'], cleanup);
    const { client } = await connectHttp(era, server.url, cleanup);
    const resources = (await listAllPages(client)).flatMap((page) => page.resources);
    expect(resources.map((r) => r.name).sort()).toEqual(Object.keys(FILES).sort());
    const origin = new URL(server.url).origin;
    for (const resource of resources) {
      expect(resource.icons, resource.name).toEqual([
        { src: `${origin}/ui/icons/${FILES[resource.name]!}.svg` },
      ]);
    }
    for (const src of new Set(resources.flatMap((r) => r.icons ?? []).map((icon) => icon.src))) {
      const answer = await get(src);
      expect(answer.status, src).toBe(200);
      expect(answer.type).toBe('image/svg+xml');
      expect(answer.body).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*>.*<\/svg>$/);
      expect(answer.body).not.toMatch(/<script|on\w+=|href=/i);
    }
  });
});

describe('resource icons: where they point and what is refused', () => {
  let url: string;
  beforeAll(async () => {
    // --no-ui: the explorer is off, yet resources still name their icons, so the icons are still served.
    url = (await spawnHttpServer([dir], ['--no-search', '--no-ui'], cleanup)).url;
  });

  it('builds the icon URL from the Host the request came in on (localhost and 127.0.0.1 alike)', async () => {
    const port = new URL(url).port;
    const { client } = await connectHttp('2026', `http://localhost:${port}/mcp`, cleanup);
    const [page] = await listAllPages(client);
    expect(page!.resources.find((r) => r.name === 'notes.md')?.icons).toEqual([
      { src: `http://localhost:${port}/ui/icons/markdown.svg` },
    ]);
    expect((await get(`http://localhost:${port}/ui/icons/markdown.svg`)).status).toBe(200);
  });

  it('serves the icons with the explorer turned off', async () => {
    const answer = await get(`${new URL(url).origin}/ui/icons/json.svg`);
    expect(answer.status).toBe(200);
    expect(answer.type).toBe('image/svg+xml');
  });

  it('answers an unknown icon with 404 naming the icons there are', async () => {
    const answer = await get(`${new URL(url).origin}/ui/icons/..%2Fpackage.json`);
    expect(answer.status).toBe(404);
    expect(answer.body).toBe(
      'No such icon; the icons are directory.svg, markdown.svg, image.svg, json.svg, csv.svg, code.svg, text.svg, binary.svg',
    );
    expect((await get(`${new URL(url).origin}/ui/icons/`)).status).toBe(404);
  });

  it('answers a method other than GET or HEAD with 405', async () => {
    const answer = await get(`${new URL(url).origin}/ui/icons/text.svg`, { method: 'POST' });
    expect(answer.status).toBe(405);
    expect((await get(`${new URL(url).origin}/ui/icons/text.svg`, { method: 'HEAD' })).status).toBe(
      200,
    );
  });

  it('refuses an icon request whose Host is not allowed, as /mcp does', async () => {
    const answer = await get(`${new URL(url).origin}/ui/icons/text.svg`, {
      host: 'evil.example:80',
    });
    expect(answer.status).toBe(403);
    expect(answer.body).not.toContain('<svg');
  });
});

describe.each(ERAS)('resource icons over stdio, %s era', (era) => {
  it('lists resources without icons by default, since inline pictures would triple a listing, while templates and the server keep theirs', async () => {
    const { client } = await connectStdio(era, [dir], ['--no-search'], cleanup);
    const resources = (await listAllPages(client)).flatMap((page) => page.resources);
    expect(resources).toHaveLength(Object.keys(FILES).length);
    for (const resource of resources) expect(resource.icons, resource.name).toBeUndefined();
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.length).toBeGreaterThan(0);
    for (const template of resourceTemplates)
      expect(template.icons?.[0]?.src, template.name).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(client.getServerVersion()?.icons?.length).toBeGreaterThan(0);
  });

  it('lists each resource with the icon of its kind inline when the config says resourceIcons: always', async () => {
    const { client } = await connectStdio(
      era,
      [],
      ['--no-search', '--config', configWith('always')],
      cleanup,
    );
    const resources = (await listAllPages(client)).flatMap((page) => page.resources);
    expect(resources).toHaveLength(Object.keys(FILES).length);
    for (const resource of resources) {
      const kind = FILES[resource.name]! as ResourceKind;
      expect(resource.icons, resource.name).toEqual([
        { src: inlineResourceIcon(kind), mimeType: 'image/svg+xml', sizes: ['any'] },
      ]);
      const src = resource.icons![0]!.src;
      expect(src.length).toBeLessThanOrEqual(MAX_INLINE_ICON_BYTES);
      const svg = decodeURIComponent(src.slice('data:image/svg+xml,'.length));
      expect(svg).toMatch(/^<svg xmlns='http:\/\/www\.w3\.org\/2000\/svg'[^>]*>.*<\/svg>$/);
      expect(svg).not.toMatch(/<script|on\w+=|href=/i);
    }
  });
});

describe('resourceIcons: off', () => {
  it('lists resources without icons over HTTP too', async () => {
    const server = await spawnHttpServer(
      [],
      ['--no-search', '--config', configWith('off')],
      cleanup,
    );
    const { client } = await connectHttp('2026', server.url, cleanup);
    const resources = (await listAllPages(client)).flatMap((page) => page.resources);
    expect(resources).toHaveLength(Object.keys(FILES).length);
    for (const resource of resources) expect(resource.icons, resource.name).toBeUndefined();
  });

  it('refuses a value it does not know at start, naming the field and the choices', () => {
    const run = spawnSync(
      process.execPath,
      [CLI_PATH, 'serve', '--config', configWith('sometimes')],
      {
        encoding: 'utf8',
        input: '',
        timeout: 60_000,
      },
    );
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain(
      "hints.resourceIcons: expected one of 'auto', 'always', 'off', got 'sometimes'",
    );
  });
});

describe('resourceKind', () => {
  it.each([
    ['inode/directory', 'file:///d/', 'directory'],
    [undefined, 'file:///d/sub/', 'directory'],
    ['text/markdown; charset=utf-8', 'file:///a.md', 'markdown'],
    ['image/svg+xml', 'file:///a.svg', 'image'],
    ['application/ld+json', 'file:///a.jsonld', 'json'],
    ['text/tab-separated-values', 'file:///a.tsv', 'csv'],
    ['application/javascript', 'file:///a.js', 'code'],
    ['text/x-python', 'file:///a.py', 'code'],
    ['application/yaml', 'file:///a.yaml', 'code'],
    ['text/plain', 'file:///a.txt', 'text'],
    [undefined, 'db://x/tables/t', 'text'],
    ['application/octet-stream', 'file:///a.bin', 'binary'],
    ['application/pdf', 'file:///a.pdf', 'binary'],
  ])('draws %s at %s as %s', (mimeType, uri, kind) => {
    expect(resourceKind(mimeType, uri)).toBe(kind);
  });
});
