/**
 * `reservoir check [--connect]`: validates a config file without serving and prints a one-line
 * summary, the warnings (skills, access rules, reserved paths) and, with --connect, each source's
 * answer; exit code 1 on any problem. The sources are built by the same root as `serve`.
 */
import type { Command } from 'commander';
import { ConfigFileError, DEFAULT_CONFIG_FILE, DEFAULT_CONFIG_FILES } from '../config/basics.js';
import type { Reader } from '../config/access-lint.js';
import type { LoadedConfig } from '../config/load.js';
import { mergeSettings, servedRoots, type Settings } from '../config/merge.js';
import { reservedUnderRoots } from '../config/reserved.js';
import { silentLogger } from '../core/log.js';
import type { ConnectReport } from '../server/check-connect.js';
import { withSources } from '../server/open.js';
import { findConfig, withConfigFlags, type ConfigFlags } from './options.js';
import { checkSkills } from './skills.js';
import { write } from './write.js';

export function registerCheckCommand(program: Command): void {
  withConfigFlags(program.command('check'))
    .description(
      `validate a config file (default ./${DEFAULT_CONFIG_FILE}) without serving: a one-line summary, or every problem and exit code 1`,
    )
    .option(
      '--connect',
      'also connect to every source and report each: its latency, or why it cannot answer (exit code 1 if any cannot)',
    )
    .action(async (flags: ConfigFlags & { connect?: boolean }) => {
      const found = findConfig(flags);
      if (found === undefined)
        throw new ConfigFileError(DEFAULT_CONFIG_FILE, [
          `${DEFAULT_CONFIG_FILES.join(', ')}: no config file here; pass --config PATH`,
        ]);
      const { loadConfig } = await import('../config/load.js');
      const config = loadConfig(found.path, { display: found.display });
      const settings = mergeSettings(config, { roots: [], source: {} });
      // The certificate and key are read and checked as `serve` reads them before it listens.
      if (settings.http?.tls !== undefined) {
        const { CertificateFiles } = await import('../http/tls.js');
        new CertificateFiles(settings.http.tls, silentLogger).initial();
      }
      const skills = config.skills.length === 0 ? undefined : await checkSkills(config);
      for (const line of skills?.lines ?? []) process.stderr.write(`${line}\n`);
      if (skills?.failed === true) {
        process.exitCode = 1;
        return;
      }
      for (const line of config.access === undefined ? [] : await checkAccess(config, settings))
        process.stderr.write(`warning: ${line}\n`);
      for (const line of reservedUnderRoots(settings.reserved, servedRoots(settings)))
        process.stderr.write(`${line}\n`);
      await write(`${checkSummary(config, settings)}\n`);
      if (flags.connect === true) {
        const { connectEverySource } = await import('../server/check-connect.js');
        const reports = await connectEverySource(settings);
        await write(`${connectLines(reports).join('\n')}\n`);
        if (reports.some((report) => !report.ok)) process.exitCode = 1;
      }
    });
}

/**
 * The warnings about access rules that can match nothing, judged against the roots the sources
 * would mount (built, never opened, then closed; without them, only the patterns).
 */
async function checkAccess(config: LoadedConfig, settings: Settings): Promise<string[]> {
  const { accessWarnings } = await import('../config/access-lint.js');
  let roots: string[] | undefined;
  let readers: Reader[] = [];
  try {
    [roots, readers] = await withSources(settings, async (providers, tools) => [
      providers.map((p) => p.root),
      tools.flatMap((t) => (t.reads === undefined ? [] : [{ name: t.name, reads: t.reads }])),
    ]);
    for (const entry of config.skills)
      roots.push(entry.prefix === undefined ? 'skill://' : `skill://${entry.prefix}/`);
  } catch {
    roots = undefined;
  }
  return accessWarnings(config.access!, roots, readers);
}

/** The summary line: what the file declares and how it would serve. */
function checkSummary(config: LoadedConfig, settings: Settings): string {
  const count = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;
  const serving =
    settings.http === undefined
      ? 'stdio'
      : `${settings.http.tls === undefined ? 'http' : 'https'}://${settings.http.host}:${settings.http.port}/mcp`;
  const skills =
    config.skills.length === 0 ? '' : `, ${count(config.skills.length, 'skills catalog')}`;
  return `${config.display}: valid (${count(config.sources.length + config.otherSources.length, 'source')}, ${count(config.prompts.length, 'prompt')}${skills}; serves ${serving})`;
}

/** One line per source: `ok   db://shop/  12 ms`, or `FAIL db://shop/  …reason`. */
export function connectLines(reports: readonly ConnectReport[]): string[] {
  const width = Math.max(0, ...reports.map((r) => r.source.length));
  return reports.map(
    (r) =>
      `${r.ok ? 'ok  ' : 'FAIL'} ${r.source.padEnd(width)}  ${r.ok ? `${Math.round(r.ms)} ms` : `${r.message} (after ${Math.round(r.ms)} ms)`}`,
  );
}
