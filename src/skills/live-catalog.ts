/**
 * A live skills catalog over one source directory. The SDK builds and validates the entries
 * (`SkillCatalog.load` over `ProviderSkillFiles`: frontmatter, name rules, digests, SKILL_LIMITS,
 * symlinks); this class splits the source into parts — one per top-level folder — so an edit
 * rebuilds only the folder it touched, patches that part's view into the catalog's (the cost of
 * an edit is the size of the skill, not of the catalog), and tells listeners what changed: the listing (a skill added, removed or edited) and each file whose bytes changed.
 */
import {
  SkillCatalog,
  SkillCatalogError,
  type Skill,
  type SkillWarning,
} from '@modelcontextprotocol/server/ext/skills';
import { silentLogger, type Logger } from '../core/log.js';
import type { DirectoryEntry, Provider } from '../core/types.js';
import { directoryChildren, ProviderSkillFiles, type SourceEntry } from './files.js';
import { buildView, EMPTY_VIEW, patchView, pathKey, type SkillsView } from './view.js';
import { NotFoundError } from '../core/errors.js';
import { definedProps } from '../core/defined.js';

export type DirectorySource = Provider & Required<Pick<Provider, 'readDirectory'>>;

export interface SkillsCatalogOptions {
  /** The provider the skills are read through (not necessarily mounted). */
  source: DirectorySource;
  /** The source directory URI holding the skill folders (ends in `/`). */
  base: string;
  /** Organisational prefix: `acme` serves `skill://acme/<skill>/…`. */
  prefix?: string | undefined;
  /** Refuse to serve (at start) or to take in (on a change) a part with any problem. */
  strict?: boolean | undefined;
  limits?: { files?: number | undefined; bytes?: number | undefined } | undefined;
  logger?: Logger | undefined;
  /** Where the catalog was declared, for logs: `skills[0]`, `--skills ./skills`. */
  label: string;
}

interface Part {
  /** The part's folder, as the base's listing named it. */
  entry: DirectoryEntry;
  skills: readonly Skill[];
  seen: ReadonlyMap<string, SourceEntry>;
  warnings: SkillWarning[];
  /** What this part alone serves, patched into the catalog's view. */
  view: SkillsView;
}

const NO_SKILLS = 'no skills found';
/** Folders built at once. */
const PARALLEL_PARTS = 8;
const ROOT_MANIFEST =
  'a SKILL.md at the root of the skills folder has no skill path; move it into a folder named after the skill (skipped)';

export class SkillsCatalog {
  /** `skill://` or `skill://<prefix>/`: every URI this catalog serves starts with it. */
  readonly root: string;
  private readonly logger: Logger;
  private parts = new Map<string, Part>();
  private rootWarnings: SkillWarning[] = [];
  private current: SkillsView = EMPTY_VIEW;
  private readonly listListeners = new Set<() => void>();
  private readonly fileListeners = new Map<string, Set<() => void>>();
  private readonly sourceWatches = new Map<string, () => void>();
  private queue: Promise<void> = Promise.resolve();
  private pending: Set<string> | 'all' | undefined;
  private stopWatching: (() => void) | undefined;

  private constructor(private readonly options: SkillsCatalogOptions) {
    this.root = options.prefix === undefined ? 'skill://' : `skill://${options.prefix}/`;
    this.logger = options.logger ?? silentLogger;
  }

  /** Builds the catalog; under `strict`, throws a SkillCatalogError naming every problem. */
  static async load(options: SkillsCatalogOptions): Promise<SkillsCatalog> {
    const catalog = new SkillsCatalog(options);
    await catalog.rebuild('all', true);
    return catalog;
  }

  get view(): SkillsView {
    return this.current;
  }

  /** Every problem found in the current catalog: skill folder or file, and the rule it breaks. */
  get warnings(): SkillWarning[] {
    return [...this.rootWarnings, ...[...this.parts.values()].flatMap((part) => part.warnings)];
  }

  /** Follows the source: every settled change rebuilds the parts it touched. */
  async live(): Promise<void> {
    if (this.stopWatching !== undefined || this.options.source.onChanges === undefined) return;
    this.stopWatching = await this.options.source.onChanges((changes) =>
      this.changed(changes.map((change) => change.uri)),
    );
  }

  /** Calls `listener` when the listing changes (a skill added, removed, or any of its files edited). */
  onListChanged(listener: () => void): () => void {
    this.listListeners.add(listener);
    return () => this.listListeners.delete(listener);
  }

  /** Calls `listener` when the bytes of the served file `uri` change or it goes away. */
  async onFileChanged(uri: string, listener: () => void): Promise<() => void> {
    let listeners = this.fileListeners.get(uri);
    if (listeners === undefined) {
      this.fileListeners.set(uri, (listeners = new Set()));
      await this.watchSource(uri);
    }
    listeners.add(listener);
    const own = listeners;
    return () => {
      own.delete(listener);
      if (own.size > 0 || this.fileListeners.get(uri) !== own) return;
      this.fileListeners.delete(uri);
      this.sourceWatches.get(uri)?.();
      this.sourceWatches.delete(uri);
    };
  }

  /**
   * A subscribed file is also watched in the source itself (the files provider's fs.watch path
   * reports a write within milliseconds, where the tree watcher batches): its folder is rebuilt at
   * once, and the subscribers hear of it when the new digest is in the view.
   */
  private async watchSource(uri: string): Promise<void> {
    const file = this.current.files.get(uri);
    const name = pathKey(this.root, uri)?.split('/')[0];
    if (file === undefined || name === undefined || this.options.source.watch === undefined) return;
    try {
      const stop = await this.options.source.watch(
        file.source,
        () => void this.refresh(new Set([name])),
      );
      if (this.fileListeners.has(uri)) this.sourceWatches.set(uri, stop);
      else stop();
    } catch (error) {
      // The tree watcher still reports the change, a little later.
      this.logger.debug(
        { err: error, uri },
        'skills: the source file could not be watched directly',
      );
    }
  }

  /** Rebuilds the part holding `path` (or everything); resolves when the view is current. */
  refresh(names: Set<string> | 'all' = 'all'): Promise<void> {
    if (this.pending === undefined) {
      this.pending = names;
      this.queue = this.queue.then(() => {
        const todo = this.pending!;
        this.pending = undefined;
        return this.rebuild(todo, false).catch((error: unknown) =>
          this.logger.warn(
            { err: error, skills: this.options.label },
            'skills catalog could not be rebuilt',
          ),
        );
      });
    } else if (this.pending !== 'all') {
      if (names === 'all') this.pending = 'all';
      else for (const name of names) this.pending.add(name);
    }
    return this.queue;
  }

  close(): void {
    this.stopWatching?.();
    this.stopWatching = undefined;
    this.listListeners.clear();
    this.fileListeners.clear();
    for (const stop of this.sourceWatches.values()) stop();
    this.sourceWatches.clear();
  }

  private changed(uris: string[]): void {
    const base = this.options.base;
    const names = new Set<string>();
    for (const uri of uris) {
      if (!uri.startsWith(base) || uri.length === base.length) {
        if (base.startsWith(uri.endsWith('/') ? uri : `${uri}/`) || uri === base.slice(0, -1))
          return void this.refresh('all');
        continue;
      }
      const first = uri.slice(base.length).split('/')[0]!;
      try {
        names.add(decodeURIComponent(first));
      } catch {
        return void this.refresh('all');
      }
    }
    if (names.size > 0) void this.refresh(names);
  }

  private async rebuild(names: Set<string> | 'all', initial: boolean): Promise<void> {
    const { source, base } = this.options;
    // An edit inside known folders rebuilds them alone; anything else lists the base again.
    if (names !== 'all' && [...names].every((name) => this.parts.has(name)))
      return this.rebuildKnown(names);
    const top = new Map<string, DirectoryEntry>();
    const rootWarnings: SkillWarning[] = [];
    for await (const child of directoryChildren(source, base, {
      signal: AbortSignal.timeout(30_000),
    })) {
      if (child.name.startsWith('.')) continue;
      if (child.kind === 'file' && child.link !== true) {
        if (child.name === 'SKILL.md')
          rootWarnings.push({ path: 'SKILL.md', message: ROOT_MANIFEST });
        continue;
      }
      top.set(child.name, child);
    }
    const wanted = names === 'all' ? new Set([...top.keys(), ...this.parts.keys()]) : names;
    const next = new Map(this.parts);
    const problems: SkillWarning[] = this.options.strict === true ? [...rootWarnings] : [];
    const load = async (name: string): Promise<void> => {
      const entry = top.get(name);
      if (entry === undefined) {
        next.delete(name);
        return;
      }
      try {
        next.set(name, await this.loadPart(entry));
      } catch (error) {
        if (!(error instanceof SkillCatalogError)) throw error;
        if (initial && this.options.strict === true) problems.push(...error.problems);
        else if (initial) {
          // A folder that cannot be read (a file over the source's read cap, say) is skipped, not fatal.
          for (const problem of error.problems) this.report(problem);
          next.set(name, {
            entry,
            skills: [],
            seen: new Map(),
            warnings: [...error.problems],
            view: EMPTY_VIEW,
          });
        } else
          this.logger.error(
            { skills: this.options.label, problems: error.problems },
            `skills: ${name} not updated: ${error.message}`,
          );
      }
    };
    // A few folders at a time: reads overlap, memory stays bounded.
    const queue = [...wanted].sort();
    await Promise.all(
      Array.from({ length: Math.min(PARALLEL_PARTS, queue.length) }, async () => {
        for (let name = queue.shift(); name !== undefined; name = queue.shift()) await load(name);
      }),
    );
    if (initial && problems.length > 0) throw new SkillCatalogError(problems);
    this.rootWarnings = rootWarnings;
    for (const warning of rootWarnings) this.report(warning);
    this.swap(next);
  }

  /** Rebuilds folders already in the catalog; one that is gone leaves it. */
  private async rebuildKnown(names: Set<string>): Promise<void> {
    const next = new Map(this.parts);
    for (const name of names) {
      const entry = this.parts.get(name)!.entry;
      try {
        await this.options.source.readDirectory(entry.uri, undefined, 1, {
          signal: AbortSignal.timeout(30_000),
        });
      } catch (error) {
        if (!(error instanceof NotFoundError)) throw error;
        next.delete(name);
        continue;
      }
      try {
        next.set(name, await this.loadPart(entry));
      } catch (error) {
        if (!(error instanceof SkillCatalogError)) throw error;
        this.logger.error(
          { skills: this.options.label, problems: error.problems },
          `skills: ${name} not updated: ${error.message}`,
        );
      }
    }
    this.swap(next);
  }

  private async loadPart(entry: DirectoryEntry): Promise<Part> {
    const files = new ProviderSkillFiles(this.options.source, this.options.base, [entry]);
    const warnings: SkillWarning[] = [];
    const catalog = await SkillCatalog.load(files, {
      // The SDK's options refuse an explicit undefined: only the fields that are set are copied.
      ...definedProps({
        prefix: this.options.prefix,
        limits: this.options.limits === undefined ? undefined : sdkLimits(this.options.limits),
      }),
      strict: this.options.strict === true,
      pageSize: Number.POSITIVE_INFINITY,
      onWarning: (warning) => {
        if (warning.path === '.' && warning.message.startsWith(NO_SKILLS)) return;
        warnings.push(warning);
      },
    });
    for (const warning of warnings) this.report(warning);
    const skills = catalog.entries;
    return {
      entry,
      skills,
      seen: files.seen,
      warnings,
      view: buildView(this.root, [{ skills, seen: files.seen }]),
    };
  }

  private report(warning: SkillWarning): void {
    this.logger.warn(
      { skills: this.options.label, path: warning.path, rule: warning.message },
      `skill problem: ${warning.path}: ${warning.message}`,
    );
  }

  /** Swaps the new parts in (patching the view with the parts that differ), then tells listeners what changed. */
  private swap(parts: Map<string, Part>): void {
    const before = this.current;
    const out: SkillsView[] = [];
    const into: SkillsView[] = [];
    let listChanged = false;
    for (const [name, old] of this.parts) {
      const now = parts.get(name);
      if (now === old) continue;
      out.push(old.view);
      if (now !== undefined) into.push(now.view);
      if (now === undefined ? old.skills.length > 0 : !sameSkills(old.skills, now.skills))
        listChanged = true;
    }
    for (const [name, now] of parts) {
      if (this.parts.has(name)) continue;
      into.push(now.view);
      if (now.skills.length > 0) listChanged = true;
    }
    this.parts = parts;
    this.current = patchView(before, out, into);
    const after = this.current;
    for (const [uri, listeners] of [...this.fileListeners]) {
      const old = before.files.get(uri);
      const now = after.files.get(uri);
      if (old?.digest === now?.digest) continue;
      for (const listener of [...listeners]) listener();
    }
    if (listChanged) for (const listener of [...this.listListeners]) listener();
  }
}

/** Whether two builds of a part list the same skills, each with the same entry (digest, frontmatter, files). */
function sameSkills(a: readonly Skill[], b: readonly Skill[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  return a.every((skill, i) => skill === b[i] || JSON.stringify(skill) === JSON.stringify(b[i]));
}

/** The limits that are set, for the SDK's `SKILL_LIMITS` overrides (which refuse an explicit undefined). */
function sdkLimits(limits: NonNullable<SkillsCatalogOptions['limits']>): {
  files?: number;
  bytes?: number;
} {
  return {
    ...definedProps({ files: limits.files, bytes: limits.bytes }),
  };
}
