/**
 * What the git provider's parts share: the repository, its name and URI root, the read caps, and
 * the ref whose tip is listed. The factory (index.ts) builds it once; reads, the listing, the
 * templates and the completers take it.
 */
import type { CallContext } from '../../core/types.js';
import type { Repository } from './repo.js';
import type { Allows } from './visible.js';

/** What a view of the history or a commit needs: the repository, the caps, the caller's access. */
export interface ViewContext {
  repo: Repository;
  root: string;
  name: string;
  maxBytes: number;
  signal: AbortSignal;
  /** Set while access rules apply: may the caller read this URI? */
  allows?: Allows | undefined;
  /** The branch the listing shows (its spelling is one more a rule may be written against). */
  listedRef?: string | undefined;
}

export interface GitSource {
  repo: Repository;
  /** The URI root, `git://<name>/`. */
  root: string;
  /** The repository name in URIs. */
  name: string;
  /** Largest blob or view one read returns, in bytes. */
  maxReadBytes: number;
  /** Most commits a history view may return. */
  maxLogEntries: number;
  /** The ref whose tip is listed: the configured branch, HEAD's branch, or HEAD when detached. */
  defaultRef(): Promise<string>;
}

/**
 * The view context of one call. While access rules apply (`allows`), it also names the listed
 * branch, one more spelling a rule may be written against.
 */
export async function viewOf(
  source: GitSource,
  signal: AbortSignal,
  allows: CallContext['allows'],
): Promise<ViewContext> {
  const { repo, root, name, maxReadBytes } = source;
  const view: ViewContext = { repo, root, name, maxBytes: maxReadBytes, signal };
  if (allows === undefined) return view;
  view.allows = allows;
  const listed = await source.defaultRef().catch(() => undefined);
  if (listed !== undefined) view.listedRef = listed;
  return view;
}
