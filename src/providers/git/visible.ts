/**
 * Which files of a repository a caller may see inside a view that names them (a commit's changed
 * files and its diff, a path's history). While access rules are in force the registry hands the
 * provider `ctx.allows`; a view judges each file on the URIs that read it — the file at every ref
 * the view involves (the commit, its parent, the ref the client named, the listed branch) — and
 * a file denied under any of them is withheld. Rules on git files are best written with a ref
 * wildcard (`git://app/* /secrets/**`), which covers every spelling at once.
 */
import type { CallContext } from '../../core/types.js';
import { fileUri, refSegment } from './address.js';

export type Allows = NonNullable<CallContext['allows']>;

/** Judges files at a fixed set of refs; `undefined` allows means no rules are in force. */
export class Visibility {
  private readonly segments: string[];

  constructor(
    private readonly root: string,
    private readonly allows: Allows | undefined,
    refs: readonly (string | undefined)[],
  ) {
    this.segments = [
      ...new Set(
        refs.filter((r): r is string => r !== undefined && r !== '').map((r) => refSegment(r)),
      ),
    ];
  }

  /** Whether any file may be withheld at all (rules in force). */
  get restricted(): boolean {
    return this.allows !== undefined;
  }

  /** Whether the file at `path` may be read at every one of the refs. */
  file(path: string): boolean {
    const allows = this.allows;
    if (allows === undefined) return true;
    return this.segments.every((segment) => allows('read', fileUri(this.root, segment, path)));
  }

  /** Whether `path` may be read as a file, and something under it as a directory, at every ref. */
  path(path: string): boolean {
    const allows = this.allows;
    if (allows === undefined) return true;
    return this.segments.every((segment) => {
      const uri = fileUri(this.root, segment, path);
      return allows('read', uri) && allows('read', `${uri}/`, true);
    });
  }
}
