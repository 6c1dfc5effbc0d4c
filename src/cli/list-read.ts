/**
 * `reservoir list` and `reservoir read URI`: one page walk or one read over the sources `serve`
 * would serve, through the same root (server/open.ts), printed as lines, JSON or the raw contents.
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { mergeSettings } from '../config/merge.js';
import { stateDirFor } from '../config/reserved.js';
import { MAX_PAGE_SIZE } from '../core/registry.js';
import type { ResourceContents } from '../core/types.js';
import { createDeferredLogger } from '../server/logger.js';
import { openRegistry, rootsOnly } from '../server/open.js';
import {
  collect,
  commandLineOf,
  configFrom,
  positiveInt,
  withConfigFlags,
  withSourceFlags,
  type ConfigFlags,
  type SourceFlags,
} from './options.js';
import { write } from './write.js';

interface ListFlags extends SourceFlags, ConfigFlags {
  cursor?: string;
  limit?: number;
  pageSize?: number;
  json?: boolean;
  stateDir?: string;
}

interface ReadFlags extends SourceFlags, ConfigFlags {
  root: string[];
  json?: boolean;
}

export function registerListCommand(program: Command): void {
  withConfigFlags(
    withSourceFlags(
      program
        .command('list')
        .description(
          'print the resources the server would list: URI, size, MIME type, last modified (tab-separated)',
        )
        .argument(
          '[roots...]',
          "directories to list, after the config file's sources (default: . when there is no config file)",
        )
        .option('--cursor <cursor>', 'start from a cursor printed by --json')
        .option('--limit <n>', 'stop after this many resources', positiveInt)
        .option('--page-size <n>', `resources per page, 1-${MAX_PAGE_SIZE}`, positiveInt)
        .option(
          '--json',
          'print one JSON object per resource, then {"nextCursor": …} if --limit cut the list',
        )
        .option(
          '--state-dir <dir>',
          "where the cursor key lives, so a cursor works in the next run (default: server.stateDir, else the platform's cache directory)",
        ),
    ),
  ).action(async (roots: string[], flags: ListFlags, command: Command) => {
    const config = await configFrom(flags);
    const settings = mergeSettings(config, commandLineOf(roots, flags, command));
    const registry = await openRegistry(settings, {
      cursors: {
        stateDir: stateDirFor(flags.stateDir, config),
        logger: createDeferredLogger('warn'),
      },
    });
    const signal = new AbortController().signal;
    let cursor = flags.cursor;
    let printed = 0;
    const limit = flags.limit ?? Number.POSITIVE_INFINITY;
    const skipped = new Map<string, string>();
    do {
      const page = await registry.listResources(
        cursor,
        { signal },
        { limit: Math.min(registry.pageSize, limit - printed) },
      );
      for (const source of page.skipped ?? []) skipped.set(source.source, source.reason);
      const lines = page.items.map((r) =>
        flags.json === true
          ? JSON.stringify(r)
          : [r.uri, r.size ?? '', r.mimeType ?? '', r.annotations?.lastModified ?? ''].join('\t'),
      );
      if (lines.length > 0) await write(`${lines.join('\n')}\n`);
      printed += page.items.length;
      cursor = page.nextCursor;
    } while (cursor !== undefined && printed < limit);
    if (cursor !== undefined && flags.json === true)
      await write(`${JSON.stringify({ nextCursor: cursor })}\n`);
    for (const [source, reason] of skipped) {
      // The operator runs this: name the source's own failure (credentials removed), as /readyz and the log do.
      const why = registry.health.outage(source)?.message ?? reason;
      process.stderr.write(
        `reservoir list: left out ${source}: ${why} (${reason}); its resources are missing\n`,
      );
    }
    if (skipped.size > 0) process.exitCode = 1;
    await registry.close();
  });
}

export function registerReadCommand(program: Command): void {
  withConfigFlags(
    withSourceFlags(
      program
        .command('read')
        .description(
          'print one resource: text as is, binary as raw bytes, a directory as a JSON listing',
        )
        .argument('<uri>', 'the resource URI, e.g. file:///abs/path/to/file.md or db://app/schema')
        .option(
          '--root <dir>',
          "serve this root (repeatable; default: the config file's sources, else the directory holding the file)",
          collect,
          [],
        )
        .option('--json', 'print the MCP read result as JSON'),
    ),
  ).action(async (uri: string, flags: ReadFlags) => {
    // --root wins; else the config file's sources (every kind); else the file's own directory.
    const config = flags.root.length > 0 ? undefined : await configFrom(flags);
    const settings =
      config !== undefined
        ? mergeSettings(config, { roots: [], source: {} })
        : rootsOnly(flags.root.length > 0 ? flags.root : [defaultRootFor(uri)], flags);
    const registry = await openRegistry(settings);
    try {
      const result = await registry.read(uri, { signal: new AbortController().signal });
      if (flags.json === true) await write(`${JSON.stringify(result, null, 2)}\n`);
      else for (const content of result.contents) await write(render(content));
    } finally {
      await registry.close();
    }
  });
}

function render(content: ResourceContents): string | Buffer {
  if ('blob' in content) return Buffer.from(content.blob, 'base64');
  if (content.mimeType === 'inode/directory')
    return `${JSON.stringify(JSON.parse(content.text), null, 2)}\n`;
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
