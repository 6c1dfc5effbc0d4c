/**
 * The git provider's listing: the files at the default branch's tip, keyset-paged in git's path
 * order, each with its size and — within a short budget, the rest for later pages — the content
 * hints of its blob's head (blob-heads.ts) and the date it last changed (last-modified.ts).
 */
import { basename } from 'node:path';
import { definedProps } from '../../core/defined.js';
import type { CallContext, ResourceInfo } from '../../core/types.js';
import { mimeFromName } from '../utils/content.js';
import { scanBudget } from '../utils/list-budget.js';
import { fileUri, refSegment } from './address.js';
import { BlobHeads, type BlobListed } from './blob-heads.js';
import type { GitSource } from './context.js';
import { LastModified, type Dated } from './last-modified.js';
import { walkTree } from './walk.js';

/** How long a list page waits for its files' content hints and dates, ms (the rest come later). */
const HINT_BUDGET_MS = 50;

export class GitListing {
  private readonly blobHeads: BlobHeads;
  private readonly lastModified: LastModified;

  constructor(private readonly source: GitSource) {
    this.blobHeads = new BlobHeads(source.repo);
    this.lastModified = new LastModified(source.repo);
  }

  /** One page of the files at the default branch's tip, after the path `after`. */
  async page(
    after: string | undefined,
    limit: number,
    ctx: CallContext,
  ): Promise<{ items: ResourceInfo[]; last?: string }> {
    const { repo, root } = this.source;
    const ref = await this.source.defaultRef();
    const resolved = await repo.resolve(ref);
    if (resolved === undefined) return { items: [] }; // an unborn branch: nothing yet
    const tree = (await repo.commit(resolved.commit)).tree;
    const page = await walkTree(repo, tree, after, limit, scanBudget(limit), ctx.signal);
    const segment = refSegment(ref);
    const sizes = await Promise.all(page.files.map((f) => repo.blobSize(f.entry.id)));
    const items = page.files.map((f, i): ResourceInfo => {
      const fileName = basename(f.path);
      const item: ResourceInfo = {
        uri: fileUri(root, segment, f.path),
        name: fileName,
        title: f.path,
        ...definedProps({ mimeType: mimeFromName(fileName) }),
        size: sizes[i]!,
      };
      if (ctx.contentIds === true) item.contentId = `git:${f.entry.id}`;
      return item;
    });
    // The search index (contentIds) reads every file itself: it needs no hints.
    if (ctx.contentIds !== true) {
      const described: BlobListed[] = [];
      const dated: Dated[] = [];
      page.files.forEach((f, i) => {
        const item = items[i]!;
        dated.push({ item, path: f.path });
        if (ctx.allows === undefined || ctx.allows('read', item.uri))
          described.push({ item, id: f.entry.id, name: item.name, size: sizes[i]! });
      });
      await Promise.all([
        this.blobHeads.annotate(described, HINT_BUDGET_MS),
        this.lastModified.annotate(resolved.commit, dated, HINT_BUDGET_MS),
      ]);
    }
    return page.last === undefined ? { items } : { items, last: page.last };
  }

  /** Stops the background date passes. */
  close(): void {
    this.lastModified.close();
  }
}
