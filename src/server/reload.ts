/**
 * Live config reload. The config file's directory is watched (editors save by writing a temporary
 * file and renaming it over the old one, which a watch on the file itself would lose); events are
 * debounced, and an edit that changes the file's text is validated like at start. A valid edit is
 * applied: prompts are replaced at once (one `prompts/list_changed`), sources are mounted,
 * unmounted or replaced (then one `resources/list_changed`), and the log level changes. Options
 * that need a restart (the HTTP address, page size, instructions) are logged and not applied. An
 * invalid edit changes nothing: the running config stays, and the log says why.
 */
import { watch, type FSWatcher, readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AccessPolicy } from '../core/access.js';
import { isReservoirError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { ConfigFileError, parseConfig, type LoadedConfig, type LoadOptions } from '../config/load.js';
import { buildProvider, mergeSettings, sameSource, type CommandLine, type Settings, type SourceSettings } from '../config/merge.js';
import { compilePrompts } from '../config/prompts.js';
import type { LogLevel } from './logger.js';
import type { Reservoir } from './index.js';

export interface ReloadOptions {
  reservoir: Reservoir;
  /** The config running now, and the settings it merged into. */
  config: LoadedConfig;
  settings: Settings;
  /** The command line the settings merged, applied again to every reloaded config. */
  commandLine: CommandLine;
  logger: Logger;
  /** Changes the log level of the running logger. */
  setLogLevel?: (level: LogLevel) => void;
  /** Quiet time after the last file event before reloading, ms. @default 200 */
  debounceMs?: number;
  env?: LoadOptions['env'];
}

export type ReloadOutcome = 'applied' | 'unchanged' | 'rejected';

/** Compiles a config's prompts and puts them in the catalog (one list change). */
export function applyPrompts(reservoir: Reservoir, config: LoadedConfig): void {
  reservoir.prompts.replaceAll(compilePrompts(config.prompts, { baseDir: config.dir, registry: reservoir.registry }));
}

export class ConfigReloader {
  private config: LoadedConfig;
  private settings: Settings;
  private text: string | undefined;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<ReloadOutcome> | undefined;
  private again = false;
  private closed = false;

  constructor(private readonly options: ReloadOptions) {
    this.config = options.config;
    this.settings = options.settings;
    this.text = readText(options.config.file);
  }

  /** Starts watching the file. */
  start(): this {
    const name = basename(this.config.file);
    try {
      this.watcher = watch(dirname(this.config.file), { persistent: false }, (_event, filename) => {
        if (filename === null || filename.toString() === name) this.schedule();
      });
      this.watcher.on('error', (error) => this.options.logger.warn({ err: error, file: this.config.file }, 'config file watching stopped'));
    } catch (error) {
      this.options.logger.warn({ err: error, file: this.config.file }, 'cannot watch the config file; edits need a restart');
    }
    return this;
  }

  /** Reloads now (the watcher calls this after the debounce). Concurrent calls run one after another. */
  async reload(): Promise<ReloadOutcome> {
    if (this.running !== undefined) {
      this.again = true;
      return this.running;
    }
    this.running = this.reloadOnce().finally(() => (this.running = undefined));
    const outcome = await this.running;
    if (this.again && !this.closed) {
      this.again = false;
      return this.reload();
    }
    return outcome;
  }

  close(): void {
    this.closed = true;
    this.watcher?.close();
    this.watcher = undefined;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.closed) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.reload();
    }, this.options.debounceMs ?? 200);
    this.timer.unref();
  }

  private async reloadOnce(): Promise<ReloadOutcome> {
    const { logger } = this.options;
    const file = this.config.file;
    const text = readText(file);
    if (text !== undefined && text === this.text) return 'unchanged';
    let config: LoadedConfig;
    let settings: Settings;
    try {
      if (text === undefined) throw new ConfigFileError(file, [`${this.config.display}: cannot read the config file`]);
      config = parseConfig(text, { file, display: this.config.display, ...(this.options.env === undefined ? {} : { env: this.options.env }) });
      settings = mergeSettings(config, this.options.commandLine);
    } catch (error) {
      const problems = error instanceof ConfigFileError ? error.problems : [isReservoirError(error) || error instanceof Error ? error.message : String(error)];
      logger.error({ file, problems }, `config reload rejected; still serving the previous config: ${problems.join('; ')}`);
      return 'rejected';
    }
    this.text = text;
    this.warnRestartNeeded(settings);
    if (settings.logLevel !== this.settings.logLevel && this.options.setLogLevel !== undefined) {
      this.options.setLogLevel(settings.logLevel);
      this.settings = { ...this.settings, logLevel: settings.logLevel };
      logger.info({ logLevel: settings.logLevel }, 'log level changed');
    }
    const sourcesChanged = await this.applySources(settings.sources);
    const promptsChanged = JSON.stringify(config.prompts) !== JSON.stringify(this.config.prompts) || config.dir !== this.config.dir;
    if (promptsChanged) applyPrompts(this.options.reservoir, config);
    // Access rules take effect at once, for every route and every later request.
    this.options.reservoir.registry.setAccess(config.access === undefined ? undefined : new AccessPolicy(config.access));
    // What needs a restart keeps its running value, so a later edit is compared with what runs.
    this.config = config;
    logger.info({ file, sourcesChanged, promptsChanged, prompts: config.prompts.length }, 'config reloaded');
    return 'applied';
  }

  /** Unmounts removed and changed sources, mounts added and changed ones; reports whether any moved. */
  private async applySources(next: readonly SourceSettings[]): Promise<boolean> {
    const { reservoir, logger } = this.options;
    const running = this.settings.sources;
    const removed = running.filter((r) => !next.some((n) => sameSource(r, n)));
    const added = next.filter((n) => !running.some((r) => sameSource(r, n)));
    const kept = running.filter((r) => !removed.includes(r));
    for (const source of removed) {
      await reservoir.registry.unmount(rootUri(source.root));
      logger.info({ root: source.root }, 'source unmounted');
    }
    const mounted: SourceSettings[] = [];
    for (const source of added) {
      try {
        reservoir.mount(buildProvider(source, logger));
        mounted.push(source);
        logger.info({ root: source.root }, 'source mounted');
      } catch (error) {
        logger.error({ err: error, root: source.root }, 'source could not be mounted');
      }
    }
    this.settings = { ...this.settings, sources: [...kept, ...mounted] };
    const changed = removed.length > 0 || mounted.length > 0;
    if (changed) await reservoir.subscriptions.sourcesChanged();
    return changed;
  }

  private warnRestartNeeded(next: Settings): void {
    const now = this.settings;
    const differing: [string, unknown, unknown][] = [
      ['server.pageSize', now.pageSize, next.pageSize],
      ['server.instructions', now.instructions, next.instructions],
      ['server.http', now.http === undefined ? 'stdio' : 'http', next.http === undefined ? 'stdio' : 'http'],
      // Skills catalogs are built at start (their contents stay live; their declaration does not).
      ['skills', JSON.stringify(now.skills ?? []), JSON.stringify(next.skills ?? [])],
    ];
    if (now.http !== undefined && next.http !== undefined) {
      differing.push(
        ['server.http.host', now.http.host, next.http.host],
        ['server.http.port', now.http.port, next.http.port],
        ['server.http.allowedHosts', now.http.allowedHosts.join(','), next.http.allowedHosts.join(',')],
        ['server.http.maxBodyBytes', now.http.maxBodyBytes, next.http.maxBodyBytes],
        ['server.http.tls', JSON.stringify(now.http.tls ?? null), JSON.stringify(next.http.tls ?? null)],
        ['server.http.sessions', JSON.stringify(now.http.sessions ?? null), JSON.stringify(next.http.sessions ?? null)],
      );
    }
    for (const [option, running, configured] of differing) {
      if (running === configured) continue;
      this.options.logger.warn({ option, running, configured }, `${option} changed: needs a restart; not applied`);
    }
  }
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** The URI a files provider serving `root` is mounted at. */
function rootUri(root: string): string {
  const href = pathToFileURL(root).href;
  return href.endsWith('/') ? href : `${href}/`;
}
