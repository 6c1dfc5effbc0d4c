/**
 * The search box. It asks the server's `search_resources` tool (ranked full-text hits with
 * snippets) when the server offers it; otherwise it says so and matches names through
 * `find_resources`. Filters: source (a served root, sent as `under`) and MIME type. "More results"
 * follows the server's cursor; while the index's first build runs the page says so and asks again.
 */
import { useEffect, useState } from 'preact/hooks';
import type { JSX } from 'preact';
import type { DataSource, Resource } from './data';
import { Icon } from './icons';
import { kindOf } from './render';
import { searchPage, snippetParts, type Hit, type SearchPage } from './search-query';
import { definedProps } from '../core/defined.js';

export const SEARCH_DEBOUNCE_MS = 150;
/** While the index is being built, the same query is asked again this often. */
const INDEXING_RETRY_MS = 1000;

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
  const [result, setResult] = useState<SearchPage | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [more, setMore] = useState(false);
  const [round, setRound] = useState(0);

  useEffect(() => {
    const words = query.trim();
    if (words === '') {
      setResult(undefined);
      setError(undefined);
      return undefined;
    }
    let cancelled = false;
    let retry: ReturnType<typeof setTimeout> | undefined;
    const timer = setTimeout(
      () => {
        searchPage(props.data, props.fullText, { query: words, under: source, mimeType })
          .then((page) => {
            if (cancelled) return;
            setResult(page);
            setError(undefined);
            if (page.indexing !== undefined)
              retry = setTimeout(() => setRound((n) => n + 1), INDEXING_RETRY_MS);
          })
          .catch(
            (failure: unknown) =>
              !cancelled && setError(failure instanceof Error ? failure.message : String(failure)),
          );
      },
      round === 0 ? SEARCH_DEBOUNCE_MS : 0,
    );
    return () => {
      cancelled = true;
      clearTimeout(timer);
      if (retry !== undefined) clearTimeout(retry);
    };
  }, [query, source, mimeType, props.fullText, round]);

  const change = (set: (value: string) => void) => (event: Event) => {
    setRound(0);
    set((event.currentTarget as HTMLInputElement | HTMLSelectElement).value);
  };

  const loadMore = (): void => {
    if (result?.nextCursor === undefined || more) return;
    setMore(true);
    searchPage(props.data, props.fullText, {
      query: query.trim(),
      under: source,
      mimeType,
      cursor: result.nextCursor,
    })
      .then((page) =>
        setResult({
          ...page,
          hits: [
            ...result.hits,
            ...page.hits.filter((hit) => !result.hits.some((seen) => seen.uri === hit.uri)),
          ],
        }),
      )
      .catch((failure: unknown) =>
        setError(failure instanceof Error ? failure.message : String(failure)),
      )
      .finally(() => setMore(false));
  };

  // The words to mark in names: operators, filters and query syntax left out.
  const terms = query
    .toLowerCase()
    .split(/\s+/)
    .filter(
      (t) =>
        /[\p{L}\p{N}]/u.test(t) &&
        !/^[a-z]+:/.test(t) &&
        t !== 'and' &&
        t !== 'or' &&
        t !== 'not' &&
        !t.startsWith('-'),
    )
    .map((t) => t.replace(/["*()]/g, ''));
  return (
    <section class="search" aria-label="Search">
      <div class="search-bar">
        <Icon name="search" />
        <input
          type="search"
          placeholder={props.fullText ? 'Search contents and names' : 'Search names'}
          aria-label="Search"
          value={query}
          onInput={change(setQuery)}
        />
        <select aria-label="Source" value={source} onChange={change(setSource)}>
          <option value="">All sources</option>
          {props.sources.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
        <select aria-label="MIME type" value={mimeType} onChange={change(setMimeType)}>
          {MIME_FILTERS.map((m) => (
            <option key={m} value={m}>
              {m === '' ? 'Any type' : m}
            </option>
          ))}
        </select>
      </div>
      {props.fullText ? null : (
        <p class="note">
          This server has no full-text search (search_resources); matching resource names instead.
        </p>
      )}
      {result?.incomplete === undefined ? null : (
        <p class="note incomplete" role="status">
          The index is incomplete ({result.incomplete.reason}): some matching resources may be
          missing.
        </p>
      )}
      {result?.indexing === undefined ? null : (
        <p class="note indexing" role="status">
          Indexing: {result.indexing.done.toLocaleString('en')} of{' '}
          {result.indexing.total.toLocaleString('en')} resources so far; these hits come from what
          is indexed, and the search runs again.
        </p>
      )}
      {error === undefined ? null : (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {result === undefined ? null : result.hits.length === 0 ? (
        <p class="muted">No matches.</p>
      ) : (
        <ol class="hits">
          {result.hits.map((hit) => (
            <HitRow key={hit.uri} hit={hit} terms={terms} onOpen={props.onOpen} />
          ))}
        </ol>
      )}
      {result?.nextCursor === undefined ? null : (
        <button class="more-hits" disabled={more} onClick={loadMore}>
          {more ? 'Loading…' : 'More results'}
        </button>
      )}
    </section>
  );
}

function HitRow({
  hit,
  terms,
  onOpen,
}: {
  hit: Hit;
  terms: string[];
  onOpen(resource: Resource): void;
}): JSX.Element {
  const open = (): void =>
    onOpen({
      uri: hit.uri,
      name: hit.name,
      ...definedProps({ title: hit.title, mimeType: hit.mimeType, size: hit.size }),
    });
  return (
    <li class="hit" data-uri={hit.uri}>
      <button class="link" onClick={open}>
        <Icon name={kindOf(hit.mimeType, hit.uri)} />
        <span>
          <Marked text={hit.title ?? hit.name} terms={terms} />
        </span>
      </button>
      <span class="hit-uri">{hit.uri}</span>
      {hit.snippet === undefined || hit.snippet === '' ? null : (
        <p class="snippet">
          {snippetParts(hit.snippet, hit.highlights).map((part, i) =>
            part.marked ? <mark key={i}>{part.text}</mark> : part.text,
          )}
        </p>
      )}
    </li>
  );
}

/** A name with the query's words wrapped in <mark>, built as elements: the text is never parsed as HTML. */
function Marked({ text, terms }: { text: string; terms: string[] }): JSX.Element {
  if (terms.length === 0) return <>{text}</>;
  const pattern = new RegExp(
    `(${terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`,
    'gi',
  );
  const parts = text.split(pattern);
  return <>{parts.map((part, i) => (i % 2 === 1 ? <mark key={i}>{part}</mark> : part))}</>;
}
