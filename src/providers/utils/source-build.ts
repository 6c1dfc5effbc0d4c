/**
 * What a source folder's `source.ts` exports for the catalog (providers/catalog.ts): its `build`,
 * from validated options to the provider and the tools it offers. Here rather than in the catalog so
 * the source folders, which the catalog imports lazily, do not import the catalog back.
 */
import type { Logger } from '../../core/log.js';
import type { Tool } from '../../core/tools.js';
import type { Provider } from '../../core/types.js';

/** What building one source yields: its provider, and the tools it offers (if any). */
export interface BuiltSource {
  provider: Provider;
  tools?: Tool[];
}

/** A source module's `build`: options as validated (without `type`), and where to log. */
export type SourceBuild<Options> = (options: Options, logger?: Logger) => BuiltSource;

/**
 * A source module's `skillsBase`, for the types a skills catalog may be read from: the directory
 * URI, with a trailing `/`, of `path` (a /-separated folder under the source's root, '' for the
 * root) in the provider `build` made from `options`.
 */
export type SkillsSourceBase<Options = never> = (
  provider: Provider,
  options: Options,
  path: string,
) => string;
