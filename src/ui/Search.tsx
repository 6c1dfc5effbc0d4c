/**
 * The search box. It asks the server's `search_resources` tool (ranked full-text hits with
 * snippets) when the server offers it; otherwise it says so and matches names through
 * `find_resources`. Filters: source (a served root, sent as `under`) and MIME type.
 */
import { useEffect, useState } from 'preact/hooks';
import type { JSX } from 'preact';
import type { DataSource, Resource } from './data';
import { Icon } from './icons';
import { kindOf } from './render';

export const SEARCH_DEBOUNCE_MS = 150;

export interface Hit {
  uri: string;
  name: string;
  title?: string;
  mimeType?: string;
  score?: number;
  snippet?: string;
  lastModified?: string;
  size?: number;
}

export interface SearchProps {
  data: DataSource;
  fullText: boolean;
  sources: string[];
  onOpen(resource: Resource): void;
}

const MIME_FILTERS = ['', 'text/*', 'text/markdown', 'application/json', 'text/csv', 'image/*'];

export function Search(props: SearchProps): JSX.Element {
  const [query, setQuery] = useState('');
  const [source, setSource] = useState('');
  const [mimeType, setMimeType] = useState('');
  const [hits, setHits] = useState<Hit[] | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);

  useEffect(() => {
    const words = query.trim();
    if (words === '') {
      setHits(undefined);
      return undefined;
    }
    let cancelled = false;
    const timer = setTimeout(() => {
      run(props.data, props.fullText, words, source, mimeType)
        .then((found) => !cancelled && (setHits(found), setError(undefined)))
        .catch((failure: unknown) => !cancelled && setError(failure instanceof Error ? failure.message : String(failure)));
    }, SEARCH_DEBOUNCE_MS);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [query, source, mimeType, props.fullText]);

  const terms = query.trim().toLowerCase().split(/\s+/).filter((t) => t !== '');
  return (
    <section class="search" aria-label="Search">
      <div class="search-bar">
        <Icon name="search" />
        <input type="search" placeholder={props.fullText ? 'Search contents and names' : 'Search names'} aria-label="Search" value={query} onInput={(e) => setQuery((e.currentTarget as HTMLInputElement).value)} />
        <select aria-label="Source" value={source} onChange={(e) => setSource((e.currentTarget as HTMLSelectElement).value)}>
          <option value="">All sources</option>
          {props.sources.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
        <select aria-label="MIME type" value={mimeType} onChange={(e) => setMimeType((e.currentTarget as HTMLSelectElement).value)}>
          {MIME_FILTERS.map((m) => (
            <option key={m} value={m}>
              {m === '' ? 'Any type' : m}
            </option>
          ))}
        </select>
      </div>
      {props.fullText ? null : <p class="note">This server has no full-text search (search_resources); matching resource names instead.</p>}
      {error === undefined ? null : (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {hits === undefined ? null : hits.length === 0 ? (
        <p class="muted">No matches.</p>
      ) : (
        <ol class="hits">
          {hits.map((hit) => (
            <li key={hit.uri} class="hit">
              <button class="link" onClick={() => props.onOpen({ uri: hit.uri, name: hit.name, ...(hit.title === undefined ? {} : { title: hit.title }), ...(hit.mimeType === undefined ? {} : { mimeType: hit.mimeType }), ...(hit.size === undefined ? {} : { size: hit.size }) })}>
                <Icon name={kindOf(hit.mimeType, hit.uri)} />
                <span>
                  <Marked text={hit.title ?? hit.name} terms={terms} />
                </span>
              </button>
              <span class="hit-uri">{hit.uri}</span>
              {hit.snippet === undefined ? null : (
                <p class="snippet">
                  <Marked text={hit.snippet} terms={terms} />
                </p>
              )}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

/** Text with the query's words wrapped in <mark>, built as elements: the text is never parsed as HTML. */
function Marked({ text, terms }: { text: string; terms: string[] }): JSX.Element {
  if (terms.length === 0) return <>{text}</>;
  const pattern = new RegExp(`(${terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`, 'gi');
  const parts = text.split(pattern);
  return <>{parts.map((part, i) => (i % 2 === 1 ? <mark key={i}>{part}</mark> : part))}</>;
}

async function run(data: DataSource, fullText: boolean, query: string, under: string, mimeType: string): Promise<Hit[]> {
  if (fullText) {
    const answer = await data.callTool('search_resources', { query, limit: 50, ...(under === '' ? {} : { under }), ...(mimeType === '' ? {} : { mimeType }) });
    if (answer.isError === true) throw new Error(answer.content.map((c) => c.text ?? '').join('\n'));
    return ((answer.structuredContent?.['hits'] ?? []) as Hit[]).slice(0, 50);
  }
  // Name matching: every word must appear in the name (a glob per word would need all orders).
  const glob = `*${query.replace(/[*?[\]{}()!+@\\]/g, '?').replace(/\s+/g, '*')}*`;
  const hits: Hit[] = [];
  let cursor: string | undefined;
  for (let calls = 0; calls < 5 && hits.length < 50; calls += 1) {
    const answer = await data.callTool('find_resources', { name: glob, limit: 50, ...(under === '' ? {} : { under }), ...(mimeType === '' ? {} : { mimeType }), ...(cursor === undefined ? {} : { cursor }) });
    if (answer.isError === true) throw new Error(answer.content.map((c) => c.text ?? '').join('\n'));
    const structured = answer.structuredContent as { resources?: Hit[]; nextCursor?: string } | undefined;
    hits.push(...(structured?.resources ?? []));
    cursor = structured?.nextCursor;
    // Show the first matches as soon as a call found some: each call scans a bounded slice.
    if (cursor === undefined || hits.length > 0) break;
  }
  return hits.slice(0, 50);
}
