/**
 * The preview of one resource, by kind: Markdown rendered and sanitised, code highlighted, JSON
 * pretty-printed and collapsible, CSV (and JSON rows) as a table, images, binary as size + hex head
 * + download, a directory as its listing. Large text files are read in parts through the source's
 * line-range template (`…{?lines}`) with "load more". Metadata sits beside the content.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { JSX } from 'preact';
import { DataError, type Contents, type DataSource, type ReadAnswer, type Resource } from './data';
import { bytesOf, formatBytes, hexHead, highlighted, kindOf, languageOf, markdownFragment, parseCsv } from './render';

/** Files larger than this are read in parts when their source serves a line-range template. */
export const PART_THRESHOLD = 256 * 1024;
const LINES_PER_PART = 2000;
const HIGHLIGHT_LIMIT = 200 * 1024;

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
  const partial = props.lineTemplates.some((head) => resource.uri.startsWith(head)) && !resource.uri.endsWith('/');

  const readPart = async (from: number): Promise<Loaded> => {
    const answer = await data.readResource(`${resource.uri}?lines=${from}-${from + LINES_PER_PART - 1}`);
    const text = answer.contents[0]?.text ?? '';
    const lines = text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    return { answer, ...(lines < LINES_PER_PART ? {} : { nextLine: from + LINES_PER_PART }) };
  };

  useEffect(() => {
    let cancelled = false;
    setError(undefined);
    setBusy(true);
    const textual = kindOf(resource.mimeType, resource.name) !== 'binary' && kindOf(resource.mimeType, resource.name) !== 'image';
    const read = async (): Promise<Loaded> => {
      if (partial && textual && (resource.size ?? 0) > PART_THRESHOLD) return readPart(1);
      try {
        return { answer: await data.readResource(resource.uri) };
      } catch (failure) {
        if (failure instanceof DataError && failure.kind === 'too_large' && partial) return readPart(1);
        throw failure;
      }
    };
    read()
      .then((value) => !cancelled && setLoaded(value))
      .catch((failure: unknown) => !cancelled && setError(failure instanceof Error ? failure.message : String(failure)))
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
      const joined = (loaded.answer.contents[0]?.text ?? '') + (next.answer.contents[0]?.text ?? '');
      setLoaded({ answer: { contents: [{ ...loaded.answer.contents[0]!, text: joined }] }, ...(next.nextLine === undefined ? {} : { nextLine: next.nextLine }) });
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
              ttl {loaded.answer.ttlMs} ms{loaded.answer.cacheScope === undefined ? '' : `, ${loaded.answer.cacheScope}`}
            </dd>
          </>
        )}
      </dl>
      {error === undefined ? null : (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {contents === undefined ? (busy ? <p class="muted">Loading…</p> : null) : <Body contents={contents} resource={resource} onOpen={props.onOpen} />}
      {loaded?.nextLine === undefined ? null : (
        <button class="more" onClick={() => void more()} disabled={busy}>
          Load more (from line {loaded.nextLine})
        </button>
      )}
    </section>
  );
}

function Body({ contents, resource, onOpen }: { contents: Contents; resource: Resource; onOpen(uri: string): void }): JSX.Element {
  const mimeType = contents.mimeType ?? resource.mimeType ?? '';
  const kind = kindOf(mimeType, resource.uri);
  if (contents.blob !== undefined) return kind === 'image' ? <ImageView blob={contents.blob} mimeType={mimeType} /> : <BinaryView blob={contents.blob} name={resource.name} mimeType={mimeType} />;
  const text = contents.text ?? '';
  if (kind === 'directory') return <DirectoryView text={text} onOpen={onOpen} />;
  if (kind === 'markdown') return <MarkdownView text={text} />;
  if (kind === 'csv') return <TableView rows={parseCsv(text)} />;
  if (kind === 'json') return <JsonView text={text} />;
  if (kind === 'image') return <ImageView blob={btoa(unescape(encodeURIComponent(text)))} mimeType={mimeType} />;
  const language = languageOf(resource.uri, mimeType);
  if (language !== undefined && text.length <= HIGHLIGHT_LIMIT) return <CodeView text={text} language={language} />;
  return <pre class="text">{text}</pre>;
}

function MarkdownView({ text }: { text: string }): JSX.Element {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    host.current?.replaceChildren(markdownFragment(text));
  }, [text]);
  return <article class="markdown" ref={host} />;
}

function CodeView({ text, language }: { text: string; language: string }): JSX.Element {
  const host = useRef<HTMLElement>(null);
  useEffect(() => {
    // highlight.js returns escaped markup of the input: the resource's characters stay text.
    if (host.current !== null) host.current.innerHTML = highlighted(text, language);
  }, [text, language]);
  return (
    <pre class="code">
      <code class={`hljs language-${language}`} ref={host} />
    </pre>
  );
}

function ImageView({ blob, mimeType }: { blob: string; mimeType: string }): JSX.Element {
  const [url, setUrl] = useState<string | undefined>(undefined);
  useEffect(() => {
    // An <img> never runs script, whatever the file holds (SVG included).
    const objectUrl = URL.createObjectURL(new Blob([bytesOf(blob)], { type: mimeType }));
    setUrl(objectUrl);
    return () => URL.revokeObjectURL(objectUrl);
  }, [blob, mimeType]);
  return <div class="image">{url === undefined ? null : <img src={url} alt="" />}</div>;
}

function BinaryView({ blob, name, mimeType }: { blob: string; name: string; mimeType: string }): JSX.Element {
  const bytes = bytesOf(blob);
  const [url, setUrl] = useState<string | undefined>(undefined);
  useEffect(() => {
    const objectUrl = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
    setUrl(objectUrl);
    return () => URL.revokeObjectURL(objectUrl);
  }, [blob]);
  return (
    <div class="binary">
      <p>
        Binary ({mimeType || 'unknown type'}), {formatBytes(bytes.length)}.{' '}
        {url === undefined ? null : (
          <a href={url} download={name}>
            Download
          </a>
        )}
      </p>
      <pre class="hex">{hexHead(bytes)}</pre>
    </div>
  );
}

function DirectoryView({ text, onOpen }: { text: string; onOpen(uri: string): void }): JSX.Element {
  let children: { uri: string; name: string; mimeType?: string; size?: number }[] = [];
  try {
    children = JSON.parse(text) as typeof children;
  } catch {
    return <pre class="text">{text}</pre>;
  }
  return (
    <ul class="listing">
      {children.map((child) => (
        <li key={child.uri}>
          <button class="link" onClick={() => onOpen(child.uri)}>
            {child.name}
          </button>{' '}
          <span class="muted">
            {child.mimeType ?? ''} {formatBytes(child.size)}
          </span>
        </li>
      ))}
    </ul>
  );
}

export function JsonView({ text }: { text: string }): JSX.Element {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return <pre class="text">{text}</pre>;
  }
  if (Array.isArray(value) && value.length > 0 && value.every((v) => v !== null && typeof v === 'object' && !Array.isArray(v))) {
    const columns = [...new Set(value.slice(0, 200).flatMap((v) => Object.keys(v as object)))];
    const rows = value.slice(0, 500).map((v) => columns.map((c) => display((v as Record<string, unknown>)[c])));
    return (
      <>
        <TableView rows={[columns, ...rows]} />
        <JsonNode value={value} label="" open={false} />
      </>
    );
  }
  return <JsonNode value={value} label="" open />;
}

function display(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function JsonNode({ value, label, open }: { value: unknown; label: string; open: boolean }): JSX.Element {
  if (value === null || typeof value !== 'object') {
    return (
      <div class="json-leaf">
        {label === '' ? null : <span class="json-key">{label}: </span>}
        <span class={`json-${value === null ? 'null' : typeof value}`}>{JSON.stringify(value)}</span>
      </div>
    );
  }
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  return (
    <details class="json" open={open}>
      <summary>
        {label === '' ? null : <span class="json-key">{label}: </span>}
        {Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`}
      </summary>
      {entries.slice(0, 1000).map(([key, child]) => (
        <JsonNode key={key} value={child} label={key} open={false} />
      ))}
    </details>
  );
}

export function TableView({ rows }: { rows: string[][] }): JSX.Element {
  const [head, ...body] = rows;
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>{(head ?? []).map((cell, i) => <th key={i}>{cell}</th>)}</tr>
        </thead>
        <tbody>
          {body.map((row, r) => (
            <tr key={r}>{row.map((cell, i) => <td key={i}>{cell}</td>)}</tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
