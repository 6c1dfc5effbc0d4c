/**
 * The preview of one resource, by kind: Markdown rendered and sanitised, code highlighted, JSON
 * pretty-printed and collapsible, CSV (and JSON rows) as a table, images, binary as size + hex head
 * + download, a directory as its listing. Large text files are read in parts through the source's
 * line-range template (`…{?lines}`) with "load more". A document (PDF, DOCX, XLSX, …) shows its
 * Markdown rendition with its parts and a download of the original (DocumentView). Metadata sits
 * beside the content.
 */
import { useEffect, useState } from 'preact/hooks';
import type { JSX } from 'preact';
import { DataError, type DataSource, type ReadAnswer, type Resource } from './data';
import { formatBytes, kindOf } from './render';
import { DocumentView, isRendition } from './DocumentView';
import { Body } from './views';
import { definedProps } from '../core/defined.js';

/** Files larger than this are read in parts when their source serves a line-range template. */
export const PART_THRESHOLD = 256 * 1024;
const LINES_PER_PART = 2000;

export interface PreviewProps {
  data: DataSource;
  resource: Resource;
  /** Templates ending in `{?lines}`, by their literal head. */
  lineTemplates: string[];
  /** Bumped when the resource changed: read again. */
  version: number;
  changedAt: number | undefined;
  onOpen(uri: string): void;
}

interface Loaded {
  answer: ReadAnswer;
  /** Part reads: the next line to read, or undefined when the whole file is shown. */
  nextLine?: number;
}

export function Preview(props: PreviewProps): JSX.Element {
  const { data, resource } = props;
  const [loaded, setLoaded] = useState<Loaded | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const partial =
    props.lineTemplates.some((head) => resource.uri.startsWith(head)) &&
    !resource.uri.endsWith('/');

  const readPart = async (from: number): Promise<Loaded> => {
    const answer = await data.readResource(
      `${resource.uri}?lines=${from}-${from + LINES_PER_PART - 1}`,
    );
    const text = answer.contents[0]?.text ?? '';
    const lines = text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    return {
      answer,
      ...definedProps({ nextLine: lines < LINES_PER_PART ? undefined : from + LINES_PER_PART }),
    };
  };

  useEffect(() => {
    let cancelled = false;
    setError(undefined);
    setBusy(true);
    const textual =
      kindOf(resource.mimeType, resource.name) !== 'binary' &&
      kindOf(resource.mimeType, resource.name) !== 'image';
    const read = async (): Promise<Loaded> => {
      if (partial && textual && (resource.size ?? 0) > PART_THRESHOLD) return readPart(1);
      try {
        return { answer: await data.readResource(resource.uri) };
      } catch (failure) {
        if (failure instanceof DataError && failure.kind === 'too_large' && partial)
          return readPart(1);
        throw failure;
      }
    };
    read()
      .then((value) => !cancelled && setLoaded(value))
      .catch(
        (failure: unknown) =>
          !cancelled && setError(failure instanceof Error ? failure.message : String(failure)),
      )
      .finally(() => !cancelled && setBusy(false));
    return () => {
      cancelled = true;
    };
  }, [resource.uri, props.version]);

  const more = async (): Promise<void> => {
    if (loaded?.nextLine === undefined) return;
    setBusy(true);
    try {
      const next = await readPart(loaded.nextLine);
      const joined =
        (loaded.answer.contents[0]?.text ?? '') + (next.answer.contents[0]?.text ?? '');
      setLoaded({
        answer: { contents: [{ ...loaded.answer.contents[0]!, text: joined }] },
        ...definedProps({ nextLine: next.nextLine }),
      });
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      setBusy(false);
    }
  };

  const contents = loaded?.answer.contents[0];
  return (
    <section class="preview" aria-label="Preview" aria-busy={busy}>
      <header class="preview-head">
        <h2 title={resource.uri}>{resource.title ?? resource.name}</h2>
        {props.changedAt === undefined ? null : (
          <span class="changed" role="status">
            changed just now
          </span>
        )}
      </header>
      <dl class="meta">
        <dt>URI</dt>
        <dd class="uri">{resource.uri}</dd>
        <dt>MIME</dt>
        <dd>{contents?.mimeType ?? resource.mimeType ?? 'unknown'}</dd>
        {resource.size === undefined ? null : (
          <>
            <dt>Size</dt>
            <dd>{formatBytes(resource.size)}</dd>
          </>
        )}
        {resource.annotations?.lastModified === undefined ? null : (
          <>
            <dt>Modified</dt>
            <dd>{new Date(resource.annotations.lastModified).toLocaleString()}</dd>
          </>
        )}
        {resource.annotations?.priority === undefined ? null : (
          <>
            <dt>Priority</dt>
            <dd>{resource.annotations.priority}</dd>
          </>
        )}
        {resource.annotations?.audience === undefined ? null : (
          <>
            <dt>Audience</dt>
            <dd>{resource.annotations.audience.join(', ')}</dd>
          </>
        )}
        {loaded?.answer.ttlMs === undefined ? null : (
          <>
            <dt>Cache</dt>
            <dd>
              ttl {loaded.answer.ttlMs} ms
              {loaded.answer.cacheScope === undefined ? '' : `, ${loaded.answer.cacheScope}`}
            </dd>
          </>
        )}
      </dl>
      {error === undefined ? null : (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {contents === undefined ? (
        busy ? (
          <p class="muted">Loading…</p>
        ) : null
      ) : loaded !== undefined && isRendition(loaded.answer, resource) ? (
        <DocumentView data={data} resource={resource} rendition={contents.text ?? ''} />
      ) : (
        <Body contents={contents} resource={resource} onOpen={props.onOpen} />
      )}
      {loaded?.nextLine === undefined ? null : (
        <button class="more" onClick={() => void more()} disabled={busy}>
          Load more (from line {loaded.nextLine})
        </button>
      )}
    </section>
  );
}
