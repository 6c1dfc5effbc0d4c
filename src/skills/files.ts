/**
 * The SDK's `SkillFiles` storage adapter over a Reservoir provider: `list` pages through the
 * provider's `readDirectory`, `read` through its `read`, so a skills catalog sees a source exactly
 * as clients would (containment, exclusions, hidden files, read caps) and any provider with
 * directory reads — files, git trees, later S3 prefixes — can hold skills. Symlinks and special
 * files are reported `unsupported`, so the SDK skips (or, under strict, refuses) the skill holding one.
 */
import type { SkillFileEntry, SkillFiles } from '@modelcontextprotocol/server/ext/skills';
import { NotFoundError } from '../core/errors.js';
import type { CallContext, DirectoryEntry, Provider } from '../core/types.js';

/** Children asked for per directory call. */
const DIRECTORY_PAGE = 1000;

/** What the adapter saw of one path: the source URI it reads from and the source's MIME type. */
export interface SourceEntry {
  uri: string;
  mimeType?: string | undefined;
}

export class ProviderSkillFiles implements SkillFiles {
  /** Every path listed so far (`/`-joined, relative to the base) and where it lives in the source. */
  readonly seen = new Map<string, SourceEntry>();

  constructor(
    private readonly source: Provider & Required<Pick<Provider, 'readDirectory'>>,
    /** The source directory URI holding the skill folders (ends in `/`). */
    private readonly base: string,
    /**
     * The top level as already listed, limited to the folders of one part (a partial rebuild reads
     * only its own folder, not the whole base again); undefined: list the base.
     */
    private readonly top?: readonly DirectoryEntry[],
  ) {}

  async list(dir: string): Promise<SkillFileEntry[]> {
    if (dir === '' && this.top !== undefined)
      return this.top.map((child) => this.record('', child));
    const uri = dir === '' ? this.base : this.seen.get(dir)?.uri;
    if (uri === undefined) throw new NotFoundError(dir);
    const entries: SkillFileEntry[] = [];
    for await (const child of directoryChildren(this.source, uri, context()))
      entries.push(this.record(dir, child));
    return entries;
  }

  private record(dir: string, child: DirectoryEntry): SkillFileEntry {
    const path = dir === '' ? child.name : `${dir}/${child.name}`;
    this.seen.set(path, { uri: child.uri, mimeType: child.mimeType });
    return {
      name: child.name,
      kind: child.link === true || child.kind === 'special' ? 'unsupported' : child.kind,
    };
  }

  async read(path: string): Promise<Uint8Array> {
    const uri = this.seen.get(path)?.uri;
    if (uri === undefined) throw new NotFoundError(path);
    return readBytes(this.source, uri, context());
  }
}

/** Every child of a source directory, page by page. */
export async function* directoryChildren(
  source: Provider & Required<Pick<Provider, 'readDirectory'>>,
  uri: string,
  ctx: CallContext,
): AsyncGenerator<DirectoryEntry> {
  let after: string | undefined;
  do {
    const page = await source.readDirectory(uri, after, DIRECTORY_PAGE, ctx);
    yield* page.items;
    after = page.last;
  } while (after !== undefined);
}

/** The bytes of one resource as the source serves it (text is UTF-8, a blob base64). */
export async function readBytes(
  source: Provider,
  uri: string,
  ctx: CallContext,
): Promise<Uint8Array> {
  const { contents } = await source.read(uri, ctx);
  const content = contents[0];
  if (content === undefined) throw new NotFoundError(uri);
  return 'blob' in content
    ? Buffer.from(content.blob, 'base64')
    : Buffer.from(content.text, 'utf8');
}

/** The catalog reads as the server itself: no principal, no rules; bounded by a deadline. */
function context(): CallContext {
  return { signal: AbortSignal.timeout(30_000) };
}
