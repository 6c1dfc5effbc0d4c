/**
 * What the search box asks the server, and how it reads the answers. Full text: the server's
 * `search_resources` tool (ranked hits, plain snippets with `highlights` ranges, `nextCursor`, and
 * `indexing` while the first build runs). Without it: name matching through `find_resources`.
 * Both page with the server's cursor.
 */
import type { DataSource } from './data';
import { definedProps } from '../core/defined.js';

export const SEARCH_PAGE_SIZE = 50;

export interface Hit {
  uri: string;
  name: string;
  title?: string;
  mimeType?: string;
  score?: number;
  snippet?: string;
  /** Where the matches lie in `snippet`: `[start, end)` in UTF-16 code units (JavaScript string indices). */
  highlights?: [number, number][];
  lastModified?: string;
  size?: number;
}

export interface SearchPage {
  hits: Hit[];
  nextCursor?: string | undefined;
  /** Set while the index's first build runs: the hits come from what is indexed so far. */
  indexing?: { done: number; total: number } | undefined;
  /** Set when the index could not be written (disk full): some resources are missing from it. */
  incomplete?: { reason: string } | undefined;
}

export interface SearchRequest {
  query: string;
  /** A served root's URI, or '' for all sources. */
  under: string;
  /** A MIME type or family (`text/*`), or '' for any. */
  mimeType: string;
  cursor?: string;
}

/** One page of hits for `request`, from `search_resources` when `fullText`, else `find_resources`. */
export async function searchPage(
  data: DataSource,
  fullText: boolean,
  request: SearchRequest,
): Promise<SearchPage> {
  const filters = {
    ...definedProps({
      under: request.under === '' ? undefined : request.under,
      mimeType: request.mimeType === '' ? undefined : request.mimeType,
    }),
  };
  if (fullText) {
    const answer = await data.callTool('search_resources', {
      query: request.query,
      limit: SEARCH_PAGE_SIZE,
      ...filters,
      ...definedProps({ cursor: request.cursor }),
    });
    if (answer.isError === true)
      throw new Error(answer.content.map((c) => c.text ?? '').join('\n'));
    const structured = answer.structuredContent as Partial<SearchPage> | undefined;
    return {
      hits: structured?.hits ?? [],
      nextCursor: structured?.nextCursor,
      indexing: structured?.indexing,
      incomplete: structured?.incomplete,
    };
  }
  // Name matching: every word must appear in the name, in order (a glob per word would need all orders).
  const glob = `*${request.query.replace(/[*?[\]{}()!+@\\]/g, '?').replace(/\s+/g, '*')}*`;
  const hits: Hit[] = [];
  let cursor = request.cursor;
  for (let calls = 0; calls < 5 && hits.length < SEARCH_PAGE_SIZE; calls += 1) {
    const answer = await data.callTool('find_resources', {
      name: glob,
      limit: SEARCH_PAGE_SIZE,
      ...filters,
      ...definedProps({ cursor }),
    });
    if (answer.isError === true)
      throw new Error(answer.content.map((c) => c.text ?? '').join('\n'));
    const structured = answer.structuredContent as
      { resources?: Hit[]; nextCursor?: string } | undefined;
    hits.push(...(structured?.resources ?? []));
    cursor = structured?.nextCursor;
    // Show the first matches as soon as a call found some: each call scans a bounded slice.
    if (cursor === undefined || hits.length > 0) break;
  }
  return { hits, nextCursor: cursor };
}

/**
 * A snippet split at the server's highlight ranges: marked parts are the matched words. Ranges
 * out of order, overlapping or outside the text are skipped; the text itself is never scanned for
 * markers (a Markdown file's own `**bold**` is text). The parts are shown as text nodes and <mark>
 * elements, never parsed as HTML.
 */
export function snippetParts(
  snippet: string,
  highlights: readonly unknown[] = [],
): { text: string; marked: boolean }[] {
  const parts: { text: string; marked: boolean }[] = [];
  let at = 0;
  for (const range of highlights) {
    if (!Array.isArray(range) || range.length !== 2) continue;
    const [start, end] = range as unknown[];
    if (!Number.isInteger(start) || !Number.isInteger(end)) continue;
    const from = start as number;
    const to = end as number;
    if (from < at || to <= from || to > snippet.length) continue;
    if (from > at) parts.push({ text: snippet.slice(at, from), marked: false });
    parts.push({ text: snippet.slice(from, to), marked: true });
    at = to;
  }
  if (at < snippet.length) parts.push({ text: snippet.slice(at), marked: false });
  return parts;
}
