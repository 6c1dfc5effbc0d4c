#!/usr/bin/env node
/**
 * Bench peer: the smallest honest SDK v2 server for the stdio read benchmark. One `McpServer` from
 * `@modelcontextprotocol/server` with a single file registered via `registerResource` and read with
 * `fs.promises.readFile` on every request, served over stdio with `serveStdio`.
 *
 * Usage: node bench/peers/bare-sdk-stdio.mjs FILE
 * The resource URI is the file's `file://` URL, so clients send exactly what they send Reservoir.
 */
import { readFile } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

const file = process.argv[2];
if (file === undefined) {
  process.stderr.write('usage: bare-sdk-stdio.mjs FILE\n');
  process.exit(2);
}
const path = resolve(file);
const uri = pathToFileURL(path).href;

serveStdio(() => {
  const server = new McpServer(
    { name: 'bare-sdk-stdio', version: '1.0.0' },
    { capabilities: { resources: {} } },
  );
  server.registerResource(basename(path), uri, { mimeType: 'text/plain' }, async (u) => ({
    contents: [{ uri: u.href, mimeType: 'text/plain', text: await readFile(path, 'utf8') }],
  }));
  return server;
});
