#!/usr/bin/env node
/**
 * Bench peer (context for the list benchmark): a bare SDK v2 `McpServer` that walks DIR once at
 * startup and registers every regular file with `registerResource` (name, URI, MIME type, size,
 * as a typical hand-written server would). The SDK then answers `resources/list` with every
 * resource in one response (no paging). Served over stdio with `serveStdio`.
 *
 * Usage: node bench/peers/bare-sdk-list.mjs DIR
 * Prints `registered N` to stderr once the tree is registered (the bench reads it for a count).
 */
import { readdirSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

const dir = process.argv[2];
if (dir === undefined) {
  process.stderr.write('usage: bare-sdk-list.mjs DIR\n');
  process.exit(2);
}
const root = resolve(dir);

/** Every regular file under root, depth-first, sorted by name (bounded depth). */
function walk(abs, depth, out) {
  if (depth > 64) return;
  const entries = readdirSync(abs, { withFileTypes: true }).sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  for (const entry of entries) {
    const child = join(abs, entry.name);
    if (entry.isDirectory()) walk(child, depth + 1, out);
    else if (entry.isFile()) out.push(child);
  }
  return out;
}

const files = walk(root, 0, []);
const registered = files.map((path) => ({
  path,
  uri: pathToFileURL(path).href,
  size: statSync(path).size,
}));

serveStdio(() => {
  const server = new McpServer(
    { name: 'bare-sdk-list', version: '1.0.0' },
    { capabilities: { resources: {} } },
  );
  for (const { path, uri, size } of registered) {
    server.registerResource(
      path.slice(root.length + 1),
      uri,
      { mimeType: 'text/plain', size },
      async (u) => ({
        contents: [{ uri: u.href, mimeType: 'text/plain', text: await readFile(path, 'utf8') }],
      }),
    );
  }
  return server;
});
process.stderr.write(`registered ${registered.length}\n`);
