/**
 * The peer for subscribe throughput: a bare MCP server on the SDK's own stdio transport that
 * answers `resources/subscribe` with one `fs.watch` per file and `notifications/resources/updated`
 * on every event — no access rules, no settling, no deduplication. What the SDK alone costs.
 * Usage: node bench/lib/bare-subscribe-server.mjs
 */
import { watch } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Server } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';

const server = new Server(
  { name: 'bare-subscribe', version: '1.0.0' },
  { capabilities: { resources: { subscribe: true } } },
);
const watchers = new Map();
server.setRequestHandler('resources/subscribe', (request) => {
  const uri = request.params.uri;
  if (!watchers.has(uri)) {
    const watcher = watch(fileURLToPath(uri), { persistent: false }, () => {
      void server.sendResourceUpdated({ uri });
    });
    watchers.set(uri, watcher);
  }
  return {};
});
server.setRequestHandler('resources/unsubscribe', (request) => {
  watchers.get(request.params.uri)?.close();
  watchers.delete(request.params.uri);
  return {};
});
await server.connect(new StdioServerTransport());
