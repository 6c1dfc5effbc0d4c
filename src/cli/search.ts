/**
 * `reservoir search QUERY` and `reservoir index`: the search index from the command line, over the
 * same sources `serve` would serve (roots, or the config file's sources) and the same state directory.
 */
import type { Command } from 'commander';
import type { Logger } from '../core/log.js';
import { mergeSettings } from '../config/merge.js';
import { openSearch } from '../server/open.js';
import type { SearchService } from '../search/service.js';
import { stateDirFor } from '../config/reserved.js';
import { emphasisWanted, formatHit } from './search-hit.js';
import {
  commandLineOf,
  configFrom,
  positiveInt,
  withConfigFlags,
  withSourceFlags,
  type ConfigFlags,
  type SourceFlags,
} from './options.js';

interface SearchFlags extends SourceFlags, ConfigFlags {
  stateDir?: string;
  limit?: number;
  json?: boolean;
}

export function addSearchCommands(
  program: Command,
  write: (chunk: string) => Promise<void>,
  logger: () => Logger,
): void {
  withConfigFlags(
    withSourceFlags(
      program
        .command('search')
        .description(
          'search the text, names and paths of the served resources (building or refreshing the index first): best first, one per line',
        )
        .argument(
          '<query>',
          'words (all required), "a phrase", prefix*, OR, NOT, path:DIR/, mime:TYPE, source:NAME',
        )
        .argument(
          '[roots...]',
          "directories to search, after the config file's sources (default: . when there is no config file)",
        )
        .option('--limit <n>', 'how many hits to print (default 20, at most 100)', positiveInt)
        .option('--json', 'print one JSON object per hit')
        .option(
          '--state-dir <dir>',
          "where the index lives (default: server.stateDir, else the platform's cache directory)",
        ),
    ),
  ).action(async (query: string, roots: string[], flags: SearchFlags, command: Command) => {
    await withIndex(roots, flags, command, logger(), false, async (service) => {
      const page = await service.search(
        { query, limit: Math.min(flags.limit ?? 20, 100) },
        { signal: new AbortController().signal },
      );
      const terminal = emphasisWanted(process.stdout, process.env);
      const lines = page.hits.map((hit) =>
        flags.json === true ? JSON.stringify(hit) : formatHit(hit, terminal),
      );
      if (lines.length > 0) await write(`${lines.join('\n')}\n`);
      if (page.hits.length === 0 && flags.json !== true)
        process.stderr.write(`no resources match ${JSON.stringify(query)}\n`);
    });
  });

  withConfigFlags(
    withSourceFlags(
      program
        .command('index')
        .description(
          'build or refresh the search index of the served resources ahead of time, showing progress on stderr',
        )
        .argument(
          '[roots...]',
          "directories to index, after the config file's sources (default: . when there is no config file)",
        )
        .option(
          '--state-dir <dir>',
          "where the index lives (default: server.stateDir, else the platform's cache directory)",
        ),
    ),
  ).action(async (roots: string[], flags: SearchFlags, command: Command) => {
    await withIndex(roots, flags, command, logger(), true, async (service) => {
      process.stderr.write(`index: ${service.file}\n`);
    });
  });
}

async function withIndex(
  roots: string[],
  flags: SearchFlags,
  command: Command,
  logger: Logger,
  report: boolean,
  use: (service: SearchService) => Promise<void>,
): Promise<void> {
  const config = await configFrom(flags);
  const settings = mergeSettings(config, commandLineOf(roots, flags, command));
  const { registry, service } = await openSearch(
    config,
    settings,
    stateDirFor(flags.stateDir, config),
    logger,
  );
  try {
    const reporter =
      report || process.stderr.isTTY === true
        ? (await import('./progress.js')).progressReporter()
        : undefined;
    const off =
      reporter === undefined
        ? undefined
        : service.onProgress(() => reporter.update(service.progress()));
    await service.ready;
    await service.idle();
    off?.();
    if (report) reporter?.finish(service.progress(), await service.totals());
    else if (reporter !== undefined) process.stderr.write('\r\u001b[K');
    await use(service);
    const partial = service.progress().partial;
    if (partial !== undefined) {
      // The words that did not fit are missing: a script must not take this index (or these hits) as whole.
      process.stderr.write(
        `reservoir: the search index ${service.file} is partial: writing it failed (${partial.code}: ${partial.message}); free space or fix the state directory and run \`reservoir index\` again\n`,
      );
      process.exitCode = 1;
    }
  } finally {
    await service.close();
    await registry.close();
  }
}
