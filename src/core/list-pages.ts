/**
 * The Registry's list pages. Merged across mounts: where a cursor resumes (which mount, which key
 * inside it), one page of resources gathered source after source within each source's time budget,
 * one page of templates, and the cursor that resumes after them. Name-sorted (prompts, tools): one
 * page after the name a cursor holds. The Registry owns the mounts and the codec; this module walks
 * them.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { AccessControl } from './access-control.js';
import { listWithin } from './bounded-list.js';
import type { CursorCodec } from './cursor.js';
import { definedProps } from './defined.js';
import { InvalidCursorError, isReservoirError } from './errors.js';
import type { ResourceHints } from './hints.js';
import type { SkippedSource, SourceHealth } from './source-health.js';
import type {
  CallContext,
  Provider,
  ProviderPage,
  ResourceInfo,
  ResourceTemplate,
  ResourceTemplateInfo,
} from './types.js';
import type { Principal } from './principal.js';
import type { ListPage } from './registry-options.js';

/** A provider may return short pages (e.g. skipping ignored entries); this bounds the calls per page. */
const MAX_PROVIDER_CALLS_PER_PAGE = 64;
/**
 * Judging and hinting a page's items runs at most this long before the event loop gets a turn, ms:
 * a read sent beside a page of 1,000 items is not held up by all of them (see files/slice.ts).
 */
const ITEMS_SLICE_MS = 2;
/** Items judged between two looks at the clock. */
const ITEMS_PER_CLOCK_LOOK = 64;

/** Where a merged page starts or resumes: the mount's index, and the key (or offset) inside it. */
export interface MountPosition {
  index: number;
  after?: string;
}

/** The position `cursor` holds in `list` over `mounts`; the start when there is no cursor. */
export function openMountPosition(
  cursors: CursorCodec,
  mounts: readonly Provider[],
  list: 'resources' | 'templates',
  cursor: string | undefined,
  binding: string | undefined,
): MountPosition {
  if (cursor === undefined) return { index: 0 };
  const position = cursors.decode(cursor, list, binding);
  const index = mounts.findIndex((p) => p.root === position.mount);
  if (index < 0)
    throw new InvalidCursorError('the source this cursor pointed into is no longer served');
  const after = position.after;
  if (after !== undefined) {
    const provider = mounts[index]!;
    const valid =
      list === 'templates' ? /^[1-9]\d{0,8}$/.test(after) : (provider.isValidKey?.(after) ?? true);
    if (!valid) throw new InvalidCursorError('the cursor position is not valid for its source');
  }
  return { index, ...definedProps({ after }) };
}

/** The cursor resuming `list` at `next`, or undefined when every mount has been walked. */
export function sealMountPosition(
  cursors: CursorCodec,
  mounts: readonly Provider[],
  list: 'resources' | 'templates',
  next: MountPosition,
  binding: string | undefined,
): string | undefined {
  if (next.index >= mounts.length) return undefined;
  const position = {
    list,
    mount: mounts[next.index]!.root,
    ...definedProps({ after: next.after }),
  };
  return cursors.encode(position, binding);
}

/** What gathering a page of resources reads of the Registry. */
export interface ResourceSources {
  mounts: readonly Provider[];
  health: SourceHealth;
  access: AccessControl;
  hints: ResourceHints;
  /** Time one source may spend on its part of the page, ms. */
  sourceListTimeoutMs: number;
}

/**
 * Up to `limit` resources from `from` on, source after source, each listed item judged and hinted.
 * A source that is down, fails or runs past its budget is skipped (and reported), never hiding the
 * others; one that answered and then ran out of budget ends the page there, for the cursor to resume.
 */
export async function gatherResources(
  sources: ResourceSources,
  from: MountPosition,
  limit: number,
  ctx: CallContext,
): Promise<{ items: ResourceInfo[]; skipped: SkippedSource[]; next: MountPosition }> {
  const { mounts, health, access, hints } = sources;
  let { index, after } = from;
  const items: ResourceInfo[] = [];
  const call = access.providerContext(ctx);
  const skipped: SkippedSource[] = [];
  let calls = 0;
  // Each source has its own time budget for this page, counted from its first call in it.
  let sourceStarted = Date.now();
  // Calls the current source answered in this page: once it has answered, running out of budget
  // ends the page there (the cursor resumes it) instead of calling it failed.
  let sourceAnswered = 0;
  while (index < mounts.length && items.length < limit && calls < MAX_PROVIDER_CALLS_PER_PAGE) {
    const provider = mounts[index]!;
    calls += 1;
    let page: ProviderPage = { items: [] };
    const outage = health.outage(provider.root);
    if (outage !== undefined) {
      // A source known to be down is skipped at once; the health probe brings it back.
      skipped.push({ source: outage.source, reason: outage.reason });
    } else {
      const remaining = sources.sourceListTimeoutMs - (Date.now() - sourceStarted);
      if (sourceAnswered > 0 && remaining <= 0) break;
      try {
        page = await listWithin(provider, after, limit - items.length, call, remaining);
        sourceAnswered += 1;
        health.succeeded(provider);
      } catch (error) {
        // The caller gave up (cancel, disconnect, deadline): that is not the source's failure.
        if (ctx.signal.aborted) throw error;
        if (sourceAnswered > 0 && isReservoirError(error) && error.code === 'timeout') break;
        // One failing source never hides the others: this traversal goes on without it (docs/design.md).
        skipped.push(health.failed(provider, error));
      }
    }
    let sliceStart = performance.now();
    for (let i = 0; i < page.items.length; i += 1) {
      if (i % ITEMS_PER_CLOCK_LOOK === ITEMS_PER_CLOCK_LOOK - 1) {
        if (performance.now() - sliceStart >= ITEMS_SLICE_MS) {
          await nextTurn();
          sliceStart = performance.now();
        }
      }
      const item = page.items[i]!;
      if (access.listed(ctx.principal, item.uri)) items.push(hints.apply(item));
    }
    if (page.last === undefined) {
      index += 1;
      after = undefined;
      sourceStarted = Date.now();
      sourceAnswered = 0;
    } else {
      after = page.last;
    }
  }
  return { items, skipped, next: { index, ...definedProps({ after }) } };
}

/**
 * Up to `limit` templates from `from` on (its `after` is an offset into the mount's templates),
 * those `principal` may not see left out.
 */
export function gatherTemplates(
  mounts: readonly Provider[],
  templatesOf: (provider: Provider) => ResourceTemplate[],
  access: AccessControl,
  principal: Principal | undefined,
  from: MountPosition,
  limit: number,
): { items: ResourceTemplateInfo[]; next: MountPosition } {
  let index = from.index;
  let offset = from.after === undefined ? 0 : Number(from.after);
  const items: ResourceTemplateInfo[] = [];
  while (index < mounts.length && items.length < limit) {
    const templates = templatesOf(mounts[index]!);
    const taken = templates.slice(offset, offset + limit - items.length);
    for (const template of taken)
      if (access.templateVisible(principal, template)) items.push(template);
    offset += taken.length;
    if (offset >= templates.length) {
      index += 1;
      offset = 0;
    }
  }
  return { items, next: offset === 0 ? { index } : { index, after: String(offset) } };
}

/** One page of `sorted` (by name) after the name `cursor` holds, behind the same sealed cursors. */
export function nameSortedPage<T extends { name: string }>(
  cursors: CursorCodec,
  list: 'prompts' | 'tools',
  sorted: readonly T[],
  cursor: string | undefined,
  limit: number,
  binding: string | undefined,
): ListPage<T> {
  let start = 0;
  if (cursor !== undefined) {
    const after = cursors.decode(cursor, list, binding).after ?? '';
    while (start < sorted.length && sorted[start]!.name <= after) start += 1;
  }
  const items = sorted.slice(start, start + limit);
  if (start + limit >= sorted.length) return { items };
  const position = { list, mount: '', after: items[items.length - 1]!.name };
  return { items, nextCursor: cursors.encode(position, binding) };
}
