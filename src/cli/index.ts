#!/usr/bin/env node
/**
 * The `reservoir` command. It parses flags, calls the library, prints, and sets the exit code;
 * it adds no behaviour of its own.
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, Option } from 'commander';
import { isReservoirError } from '../core/errors.js';
import { MAX_PAGE_SIZE, Registry } from '../core/registry.js';
import type { ResourceContents } from '../core/types.js';
import { SERVER_VERSION } from '../mcp/server.js';
import { sdkTemplateEngine } from '../mcp/templates.js';
import { createReservoir } from '../server/index.js';
import { createLogger, LOG_LEVELS, type LogLevel } from '../server/logger.js';
import { collect, filesProviders, parseAddress, positiveInt, withSourceFlags, type SourceFlags } from './options.js';

interface ServeFlags extends SourceFlags {
  http?: string | true;
  allowedHost: string[];
  pageSize?: number;
  maxBodyBytes?: number;
  logLevel: LogLevel;
}

interface ListFlags extends SourceFlags {
  cursor?: string;
  limit?: number;
  pageSize?: number;
  json?: boolean;
}

interface ReadFlags extends SourceFlags {
  root: string[];
  json?: boolean;
}

const program = new Command()
  .name('reservoir')
  .description('Serve files (and, later, git, SQL and HTTP sources) as MCP resources over stdio or Streamable HTTP.')
  .version(SERVER_VERSION)
  .showHelpAfterError('(run with --help for usage)');

withSourceFlags(
  program
    .command('serve')
    .description('serve the given directories as MCP resources (stdio by default, or Streamable HTTP with --http)')
    .argument('[roots...]', 'directories to serve', ['.'])
    .option('--http [address]', 'serve Streamable HTTP at http://ADDRESS/mcp instead of stdio (default 127.0.0.1:7337)')
    .option('--allowed-host <name>', 'accept this Host/Origin name besides localhost (repeatable; needed when binding a non-loopback address)', collect, [])
    .option('--page-size <n>', `resources per list page, 1-${MAX_PAGE_SIZE} (default 1000)`, positiveInt)
    .option('--max-body-bytes <bytes>', 'largest HTTP request body (default 4194304 = 4 MiB)', positiveInt)
    .addOption(new Option('--log-level <level>', 'log level (logs go to stderr)').choices(LOG_LEVELS).default('info')),
).action(async (roots: string[], flags: ServeFlags) => {
  const logger = createLogger(flags.logLevel);
  const reservoir = createReservoir({
    providers: filesProviders(roots, flags, logger),
    logger,
    ...(flags.pageSize === undefined ? {} : { pageSize: flags.pageSize }),
  });
  const shutdown = async (why: string): Promise<void> => {
    logger.info({ why }, 'shutting down');
    await reservoir.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));

  if (flags.http === undefined) {
    const handle = reservoir.serveStdio();
    await handle.closed;
    await shutdown('stdin closed');
    return;
  }
  const address = parseAddress(flags.http === true ? '127.0.0.1:7337' : flags.http);
  const endpoint = await reservoir.listen({
    host: address.host,
    port: address.port,
    allowedHosts: flags.allowedHost,
    ...(flags.maxBodyBytes === undefined ? {} : { maxBodyBytes: flags.maxBodyBytes }),
  });
  logger.info({ url: endpoint.url, roots: reservoir.registry.providers().map((p) => p.root) }, `serving MCP at ${endpoint.url}`);
});

withSourceFlags(
  program
    .command('list')
    .description('print the resources the server would list: URI, size, MIME type, last modified (tab-separated)')
    .argument('[roots...]', 'directories to list', ['.'])
    .option('--cursor <cursor>', 'start from a cursor printed by --json')
    .option('--limit <n>', 'stop after this many resources', positiveInt)
    .option('--page-size <n>', `resources per page, 1-${MAX_PAGE_SIZE}`, positiveInt)
    .option('--json', 'print one JSON object per resource, then {"nextCursor": …} if --limit cut the list'),
).action(async (roots: string[], flags: ListFlags) => {
  const registry = new Registry({ templateEngine: sdkTemplateEngine, ...(flags.pageSize === undefined ? {} : { pageSize: flags.pageSize }) });
  for (const provider of filesProviders(roots, flags)) registry.mount(provider);
  const signal = new AbortController().signal;
  let cursor = flags.cursor;
  let printed = 0;
  const limit = flags.limit ?? Number.POSITIVE_INFINITY;
  do {
    const page = await registry.listResources(cursor, { signal }, { limit: Math.min(registry.pageSize, limit - printed) });
    const lines = page.items.map((r) =>
      flags.json === true ? JSON.stringify(r) : [r.uri, r.size ?? '', r.mimeType ?? '', r.annotations?.lastModified ?? ''].join('\t'),
    );
    if (lines.length > 0) await write(`${lines.join('\n')}\n`);
    printed += page.items.length;
    cursor = page.nextCursor;
  } while (cursor !== undefined && printed < limit);
  if (cursor !== undefined && flags.json === true) await write(`${JSON.stringify({ nextCursor: cursor })}\n`);
  await registry.close();
});

withSourceFlags(
  program
    .command('read')
    .description('print one resource: text as is, binary as raw bytes, a directory as a JSON listing')
    .argument('<uri>', 'the resource URI, e.g. file:///abs/path/to/file.md')
    .option('--root <dir>', 'serve this root (repeatable; default: the directory holding the file)', collect, [])
    .option('--json', 'print the MCP read result as JSON'),
).action(async (uri: string, flags: ReadFlags) => {
  const registry = new Registry({ templateEngine: sdkTemplateEngine });
  const roots = flags.root.length > 0 ? flags.root : [defaultRootFor(uri)];
  for (const provider of filesProviders(roots, flags)) registry.mount(provider);
  const result = await registry.read(uri, { signal: new AbortController().signal });
  if (flags.json === true) await write(`${JSON.stringify(result, null, 2)}\n`);
  else for (const content of result.contents) await write(render(content));
  await registry.close();
});

function render(content: ResourceContents): string | Buffer {
  if ('blob' in content) return Buffer.from(content.blob, 'base64');
  if (content.mimeType === 'inode/directory') return `${JSON.stringify(JSON.parse(content.text), null, 2)}\n`;
  return content.text;
}

/** For `read` without --root: the file's own directory (or the directory itself). */
function defaultRootFor(uri: string): string {
  let path: string;
  try {
    path = fileURLToPath(uri);
  } catch {
    return '.';
  }
  return uri.endsWith('/') ? path : dirname(path);
}

function write(chunk: string | Buffer): Promise<void> {
  return new Promise((resolve, reject) => process.stdout.write(chunk, (error) => (error ? reject(error) : resolve())));
}

program.parseAsync(process.argv).catch((error: unknown) => {
  const message = isReservoirError(error) || error instanceof Error ? error.message : String(error);
  process.stderr.write(`reservoir: ${message}\n`);
  process.exitCode = 1;
});
