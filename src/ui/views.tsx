/**
 * The preview's content views, one per kind. Content is only ever text (escaped by Preact),
 * highlight.js's escaped markup, or DOMPurify's sanitised fragment; images go through <img>.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { JSX } from 'preact';
import type { Contents, Resource } from './data';
import { bytesOf, formatBytes, hexHead, highlighted, kindOf, languageOf, markdownFragment, parseCsv } from './render';

/** Larger text is shown plain: highlighting it would stall the page. */
const HIGHLIGHT_LIMIT = 200 * 1024;

export function Body({ contents, resource, onOpen }: { contents: Contents; resource: Resource; onOpen(uri: string): void }): JSX.Element {
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
