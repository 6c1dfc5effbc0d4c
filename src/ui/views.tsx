/**
 * The preview's content views, one per kind. Content is only ever text (escaped by Preact),
 * highlight.js's escaped markup, or DOMPurify's sanitised fragment. Every URL a view shows comes
 * from inert.ts: a raster picture typed by its signature, an SVG drawn as a PNG, or a download
 * typed `application/octet-stream` — none can be opened as a document that runs script.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { JSX } from 'preact';
import type { Contents, Resource } from './data';
import { downloadUrl, rasteriseSvg, rasterUrl } from './inert';
import {
  bytesOf,
  formatBytes,
  hexHead,
  highlighted,
  kindOf,
  languageOf,
  markdownFragment,
  parseCsv,
} from './render';

/** Larger text is shown plain: highlighting it would stall the page. */
const HIGHLIGHT_LIMIT = 200 * 1024;

export function Body({
  contents,
  resource,
  onOpen,
}: {
  contents: Contents;
  resource: Resource;
  onOpen(uri: string): void;
}): JSX.Element {
  const mimeType = contents.mimeType ?? resource.mimeType ?? '';
  const kind = kindOf(mimeType, resource.uri);
  if (contents.blob !== undefined)
    return (
      <BytesView
        blob={contents.blob}
        name={resource.name}
        mimeType={mimeType}
        picture={kind === 'image'}
      />
    );
  const text = contents.text ?? '';
  if (kind === 'directory') return <DirectoryView text={text} onOpen={onOpen} />;
  if (kind === 'markdown') return <MarkdownView text={text} />;
  if (kind === 'csv') return <TableView rows={parseCsv(text)} />;
  if (kind === 'json') return <JsonView text={text} />;
  if (kind === 'image')
    return <BytesView text={text} name={resource.name} mimeType={mimeType} picture />;
  const language = languageOf(resource.uri, mimeType);
  if (language !== undefined && text.length <= HIGHLIGHT_LIMIT)
    return <CodeView text={text} language={language} />;
  return <pre class="text">{text}</pre>;
}

/** Sanitised Markdown; `rendition` for a document's rendition, whose raw HTML is shown as text. */
export function MarkdownView({
  text,
  rendition = false,
}: {
  text: string;
  rendition?: boolean;
}): JSX.Element {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    host.current?.replaceChildren(markdownFragment(text, { rendition }));
  }, [text, rendition]);
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

/** Content as bytes (a blob's, or a text's UTF-8), decoded once per content, shown as a picture or as binary. */
function BytesView({
  blob,
  text,
  name,
  mimeType,
  picture,
}: {
  blob?: string;
  text?: string;
  name: string;
  mimeType: string;
  picture: boolean;
}): JSX.Element {
  const bytes = useMemo(
    () => (blob === undefined ? new TextEncoder().encode(text ?? '') : bytesOf(blob)),
    [blob, text],
  );
  return picture ? (
    <ImageView bytes={bytes} name={name} mimeType={mimeType} />
  ) : (
    <BinaryView bytes={bytes} name={name} mimeType={mimeType} />
  );
}

type Picture = { url: string; width?: number; height?: number } | 'unshown';

/**
 * A picture: raster bytes (by their signature, whatever type the resource claims) through a blob:
 * URL of that raster type; anything else is tried as SVG and shown as the PNG it draws; bytes that
 * are neither are shown as binary. The original bytes are offered as a download.
 */
function ImageView({
  bytes,
  name,
  mimeType,
}: {
  bytes: Uint8Array<ArrayBuffer>;
  name: string;
  mimeType: string;
}): JSX.Element {
  const [picture, setPicture] = useState<Picture | undefined>(undefined);
  useEffect(() => {
    let made = rasterUrl(bytes);
    let cancelled = false;
    if (made !== undefined) setPicture({ url: made });
    else {
      setPicture(undefined);
      rasteriseSvg(bytes, window.devicePixelRatio).then(
        (drawn) => {
          if (cancelled) return URL.revokeObjectURL(drawn.url);
          made = drawn.url;
          setPicture(drawn);
        },
        () => !cancelled && setPicture('unshown'),
      );
    }
    return () => {
      cancelled = true;
      if (made !== undefined) URL.revokeObjectURL(made);
    };
  }, [bytes]);
  if (picture === 'unshown')
    return (
      <BinaryView
        bytes={bytes}
        name={name}
        mimeType={mimeType}
        note="Not a picture this page can show."
      />
    );
  return (
    <div class="image">
      {picture === undefined ? null : (
        <img src={picture.url} alt="" width={picture.width} height={picture.height} />
      )}
      <p>
        <Download bytes={bytes} name={name} />
      </p>
    </div>
  );
}

/** A link saving the bytes under `name`; opened instead of saved, it still only saves. */
function Download({
  bytes,
  name,
}: {
  bytes: Uint8Array<ArrayBuffer>;
  name: string;
}): JSX.Element | null {
  const [url, setUrl] = useState<string | undefined>(undefined);
  useEffect(() => {
    const made = downloadUrl(bytes);
    setUrl(made);
    return () => URL.revokeObjectURL(made);
  }, [bytes]);
  return url === undefined ? null : (
    <a href={url} download={name}>
      Download
    </a>
  );
}

function BinaryView({
  bytes,
  name,
  mimeType,
  note,
}: {
  bytes: Uint8Array<ArrayBuffer>;
  name: string;
  mimeType: string;
  note?: string;
}): JSX.Element {
  return (
    <div class="binary">
      {note === undefined ? null : <p class="muted">{note}</p>}
      <p>
        Binary ({mimeType || 'unknown type'}), {formatBytes(bytes.length)}.{' '}
        <Download bytes={bytes} name={name} />
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
  if (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((v) => v !== null && typeof v === 'object' && !Array.isArray(v))
  ) {
    const columns = [...new Set(value.slice(0, 200).flatMap((v) => Object.keys(v as object)))];
    const rows = value
      .slice(0, 500)
      .map((v) => columns.map((c) => display((v as Record<string, unknown>)[c])));
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

function JsonNode({
  value,
  label,
  open,
}: {
  value: unknown;
  label: string;
  open: boolean;
}): JSX.Element {
  if (value === null || typeof value !== 'object') {
    return (
      <div class="json-leaf">
        {label === '' ? null : <span class="json-key">{label}: </span>}
        <span class={`json-${value === null ? 'null' : typeof value}`}>
          {JSON.stringify(value)}
        </span>
      </div>
    );
  }
  const entries = Array.isArray(value)
    ? value.map((v, i) => [String(i), v] as const)
    : Object.entries(value);
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
          <tr>
            {(head ?? []).map((cell, i) => (
              <th key={i}>{cell}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {body.map((row, r) => (
            <tr key={r}>
              {row.map((cell, i) => (
                <td key={i}>{cell}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
