/**
 * Live config reload. The config file's directory is watched (editors save by writing a temporary
 * file and renaming it over the old one, which a watch on the file itself would lose); events are
 * debounced, and an edit that changes the file's text is validated like at start. A valid edit is
 * applied: prompts are replaced at once (one `prompts/list_changed`), sources of every type are
 * mounted, unmounted or replaced (then one `resources/list_changed`; their tools come and go with
 * `tools/list_changed`), and the log level changes. A changed source whose new version cannot be
 * built or is not ready keeps running as it was, and the log says why. Options
 * that need a restart (the HTTP address, page size, instructions) are logged and not applied. An
 * invalid edit changes nothing: the running config stays, and the log says why.
 */
import { watch, type FSWatcher, readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AccessPolicy } from '../core/access.js';
import { ResourceHints } from '../core/hints.js';
import { isReservoirError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import {
  ConfigFileError,
  parseConfig,
  type LoadedConfig,
  type LoadOptions,
} from '../config/load.js';
import { mergeSettings, type CommandLine, type Settings } from '../config/merge.js';
import { sourceBuilder, sourceSpecs, type RunningSource, type SourceSpec } from './sources.js';
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
  /** The sources running now, as the composition root built them. @default the settings' files sources, mounted by the caller */
  running?: readonly RunningSource[];
  /** Longest a new source may take to become ready before it is given up, ms. @default 10000 */
  readyTimeoutMs?: number;
  /** Called after a reload mounted or unmounted sources (the tools made from templates follow). */
  onSourcesChanged?: (() => Promise<void>) | undefined;
}

/** What the reloader knows of a running source: enough to stop it. */
interface Mounted {
  spec: SourceSpec;
  root: string;
  tools: string[];
}

export type ReloadOutcome = 'applied' | 'unchanged' | 'rejected';

/** Compiles a config's prompts and puts them in the catalog (one list change). */
export function applyPrompts(reservoir: Reservoir, config: LoadedConfig): void {
  reservoir.prompts.replaceAll(
    compilePrompts(config.prompts, { baseDir: config.dir, registry: reservoir.registry }),
  );
}

export class ConfigReloader {
  private config: LoadedConfig;
  private settings: Settings;
  private mounted: Mounted[];
  private text: string | undefined;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<ReloadOutcome> | undefined;
  private again = false;
  private closed = false;

  constructor(private readonly options: ReloadOptions) {
    this.config = options.config;
    this.settings = options.settings;
    this.mounted =
      options.running?.map((source) => ({
        spec: source.spec,
        root: source.provider.root,
        tools: source.tools.map((tool) => tool.name),
      })) ??
      sourceSpecs(options.settings).flatMap((spec) =>
        spec.files === undefined ? [] : [{ spec, root: rootUri(spec.files.root), tools: [] }],
      );
    this.text = readText(options.config.file);
  }

  /** Starts watching the file. */
  start(): this {
    const name = basename(this.config.file);
    try {
      this.watcher = watch(dirname(this.config.file), { persistent: false }, (_event, filename) => {
        if (filename === null || filename.toString() === name) this.schedule();
      });
      this.watcher.on('error', (error) =>
        this.options.logger.warn(
          { err: error, file: this.config.file },
          'config file watching stopped',
        ),
      );
    } catch (error) {
      this.options.logger.warn(
        { err: error, file: this.config.file },
        'cannot watch the config file; edits need a restart',
      );
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
      if (text === undefined)
        throw new ConfigFileError(file, [`${this.config.display}: cannot read the config file`]);
      config = parseConfig(text, { file, display: this.config.display, env: this.options.env });
      settings = mergeSettings(config, this.options.commandLine);
    } catch (error) {
      const problems =
        error instanceof ConfigFileError
          ? error.problems
          : [isReservoirError(error) || error instanceof Error ? error.message : String(error)];
      logger.error(
        { file, problems },
        `config reload rejected; still serving the previous config: ${problems.join('; ')}`,
      );
      return 'rejected';
    }
    this.text = text;
    this.warnRestartNeeded(settings, config);
    if (settings.logLevel !== this.settings.logLevel && this.options.setLogLevel !== undefined) {
      this.options.setLogLevel(settings.logLevel);
      this.settings = { ...this.settings, logLevel: settings.logLevel };
      logger.info({ logLevel: settings.logLevel }, 'log level changed');
    }
    // Access rules take effect at once, for every route and every later request — before any new
    // source is mounted, so none is served for a moment under the rules written before it.
    this.options.reservoir.registry.setAccess(
      config.access === undefined ? undefined : new AccessPolicy(config.access),
    );
    const sourcesChanged = await this.applySources(settings);
    if (sourcesChanged) await this.options.onSourcesChanged?.();
    const promptsChanged =
      JSON.stringify(config.prompts) !== JSON.stringify(this.config.prompts) ||
      config.dir !== this.config.dir;
    if (promptsChanged) applyPrompts(this.options.reservoir, config);
    // Hints too: the next list page carries the new ones.
    this.options.reservoir.registry.setHints(new ResourceHints(config.hints));
    // What needs a restart keeps its running value, so a later edit is compared with what runs.
    this.config = config;
    logger.info(
      { file, sourcesChanged, promptsChanged, prompts: config.prompts.length },
      'config reloaded',
    );
    return 'applied';
  }

  /**
   * Builds the added and changed sources first; one that cannot be built or is not ready is
   * dropped, and the source it was to replace (same place in the config) keeps running. Then
   * unmounts what is gone, mounts what is new, and moves their tools; reports whether any moved.
   */
  private async applySources(settings: Settings): Promise<boolean> {
    const { reservoir, logger } = this.options;
    const next = sourceSpecs(settings);
    const removed = this.mounted.filter((r) => !next.some((n) => n.key === r.spec.key));
    const added = next.filter((n) => !this.mounted.some((r) => r.spec.key === n.key));
    const started: RunningSource[] = [];
    const kept: Mounted[] = [];
    const build =
      added.length === 0
        ? undefined
        : await sourceBuilder(added).catch((error: unknown) => {
            logger.error(
              { err: error },
              'new sources could not be loaded; still serving the previous ones',
            );
            return null;
          });
    if (build === null) return false;
    for (const spec of added) {
      try {
        const built = build!(spec, logger);
        await this.whenReady(built.provider);
        started.push({ spec, provider: built.provider, tools: built.tools ?? [] });
      } catch (error) {
        const previous = removed.find(
          (r) => r.spec.origin === spec.origin && r.spec.type === spec.type,
        );
        if (previous !== undefined) kept.push(previous);
        logger.error(
          { err: error, source: spec.origin, type: spec.type },
          previous === undefined
            ? 'source could not be started; not mounted'
            : 'changed source could not be started; still serving its previous version',
        );
      }
    }
    let changed = false;
    for (const source of removed.filter((r) => !kept.includes(r))) {
      for (const name of source.tools) reservoir.tools.remove(name);
      await reservoir.registry.unmount(source.root);
      this.mounted = this.mounted.filter((m) => m !== source);
      changed = true;
      logger.info(
        { source: source.spec.origin, type: source.spec.type, root: source.root },
        'source unmounted',
      );
    }
    for (const source of started) {
      try {
        reservoir.mount(source.provider);
      } catch (error) {
        logger.error(
          { err: error, source: source.spec.origin, type: source.spec.type },
          'source could not be mounted',
        );
        await source.provider.close?.().catch(() => undefined);
        continue;
      }
      for (const tool of source.tools) reservoir.tools.add(tool);
      this.mounted.push({
        spec: source.spec,
        root: source.provider.root,
        tools: source.tools.map((tool) => tool.name),
      });
      changed = true;
      logger.info(
        { source: source.spec.origin, type: source.spec.type, root: source.provider.root },
        'source mounted',
      );
    }
    this.settings = {
      ...this.settings,
      sources: settings.sources,
      otherSources: settings.otherSources,
    };
    if (changed) await reservoir.subscriptions.sourcesChanged();
    return changed;
  }

  /** Resolves when a new provider says it is ready (or has no such check); rejects when it is not, or not in time. */
  private async whenReady(provider: RunningSource['provider']): Promise<void> {
    if (provider.ready === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    const limit = this.options.readyTimeoutMs ?? 10_000;
    try {
      await Promise.race([
        provider.ready(),
        new Promise<never>(
          (_, reject) =>
            (timer = setTimeout(() => reject(new Error(`not ready after ${limit} ms`)), limit)),
        ),
      ]);
    } catch (error) {
      await provider.close?.().catch(() => undefined);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  private warnRestartNeeded(next: Settings, config: LoadedConfig): void {
    const now = this.settings;
    const differing: [string, unknown, unknown][] = [
      // The search index is opened with the running values (docs/search.md).
      ['search', JSON.stringify(this.config.search ?? null), JSON.stringify(config.search ?? null)],
      ['server.stateDir', this.config.server.stateDir, config.server.stateDir],
      ['server.pageSize', now.pageSize, next.pageSize],
      ['server.sourceListTimeoutMs', now.sourceListTimeoutMs, next.sourceListTimeoutMs],
      ['server.shutdownGraceMs', now.shutdownGraceMs, next.shutdownGraceMs],
      [
        'server.memoryReducer',
        JSON.stringify(now.memoryReducer ?? true),
        JSON.stringify(next.memoryReducer ?? true),
      ],
      ['server.instructions', now.instructions, next.instructions],
      [
        'server.title/description/websiteUrl',
        JSON.stringify(now.presentation ?? null),
        JSON.stringify(next.presentation ?? null),
      ],
      [
        'server.http',
        now.http === undefined ? 'stdio' : 'http',
        next.http === undefined ? 'stdio' : 'http',
      ],
      // Skills catalogs are built at start (their contents stay live; their declaration does not).
      ['skills', JSON.stringify(now.skills ?? []), JSON.stringify(next.skills ?? [])],
    ];
    if (now.http !== undefined && next.http !== undefined) {
      differing.push(
        ['server.http.host', now.http.host, next.http.host],
        ['server.http.port', now.http.port, next.http.port],
        [
          'server.http.allowedHosts',
          now.http.allowedHosts.join(','),
          next.http.allowedHosts.join(','),
        ],
        ['server.http.maxBodyBytes', now.http.maxBodyBytes, next.http.maxBodyBytes],
        [
          'server.http.tls',
          JSON.stringify(now.http.tls ?? null),
          JSON.stringify(next.http.tls ?? null),
        ],
        [
          'server.http.sessions',
          JSON.stringify(now.http.sessions ?? null),
          JSON.stringify(next.http.sessions ?? null),
        ],
        ['server.http.ui', now.http.ui, next.http.ui],
      );
    }
    for (const [option, running, configured] of differing) {
      if (running === configured) continue;
      this.options.logger.warn(
        { option, running, configured },
        `${option} changed: needs a restart; not applied`,
      );
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
