/**
 * A document (PDF, DOCX, XLSX, PPTX, EPUB, HTML, CSV) previewed as the Markdown rendition the
 * server answers first, through the sanitised Markdown path (with raw HTML shown as text). The
 * rendition's part markers (`<!-- page 3 -->`, `<!-- sheet Budget -->`, `<!-- slide 2 -->`,
 * `<!-- chapter 1 -->`) become a navigator: a page, sheet or slide is read on its own (`?pages=N`,
 * `?sheet=NAME`, `?slides=N`), a chapter is scrolled to. "Download original" reads `?as=bytes` and
 * saves those bytes as they are, through inert.ts's `application/octet-stream` URL.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { JSX } from 'preact';
import type { DataSource, ReadAnswer, Resource } from './data';
import { downloadUrl } from './inert';
import { bytesOf, kindOf } from './render';
import { MarkdownView } from './views';

export type PartKind = 'page' | 'sheet' | 'slide' | 'chapter';

export interface Part {
  kind: PartKind;
  /** The marker's label: a page or slide number, a sheet name, a chapter number. */
  label: string;
  /** The rendition's Markdown from this marker to the next. */
  text: string;
}

const MARKER = /^<!-- (page|sheet|slide|chapter) (.+?) -->[ \t]*$/;

/** The rendition cut at its marker lines; text before the first marker is a part with no kind. */
export function partsOf(markdown: string): { lead: string; parts: Part[] } {
  let lead = '';
  const parts: Part[] = [];
  for (const line of markdown.split('\n')) {
    const marker = MARKER.exec(line);
    if (marker !== null) parts.push({ kind: marker[1] as PartKind, label: marker[2]!, text: '' });
    else if (parts.length === 0) lead += `${line}\n`;
    else parts[parts.length - 1]!.text += `${line}\n`;
  }
  return { lead, parts };
}

/** Whether a read answered a document's rendition: Markdown first, for a resource that is not Markdown. */
export function isRendition(answer: ReadAnswer, resource: Resource): boolean {
  return (
    answer.contents[0]?.mimeType === 'text/markdown' &&
    answer.contents[0].text !== undefined &&
    kindOf(resource.mimeType, resource.name) !== 'markdown'
  );
}

function withoutMarkers(markdown: string): string {
  const { lead, parts } = partsOf(markdown);
  return lead + parts.map((part) => part.text).join('');
}

const QUERY: Record<Exclude<PartKind, 'chapter'>, string> = {
  page: 'pages',
  sheet: 'sheet',
  slide: 'slides',
};

function withQuery(uri: string, name: string, value: string): string {
  return `${uri}${uri.includes('?') ? '&' : '?'}${name}=${encodeURIComponent(value)}`;
}

const title = (part: Part): string =>
  `${part.kind[0]!.toUpperCase()}${part.kind.slice(1)} ${part.label}`;

export function DocumentView({
  data,
  resource,
  rendition,
}: {
  data: DataSource;
  resource: Resource;
  rendition: string;
}): JSX.Element {
  const { lead, parts } = useMemo(() => partsOf(rendition), [rendition]);
  /** The part read on its own, or undefined while the whole rendition is shown. */
  const [shown, setShown] = useState<{ index: number; text: string } | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const host = useRef<HTMLDivElement>(null);
  const saved = useRef<string | undefined>(undefined);

  useEffect(() => {
    setShown(undefined);
    setError(undefined);
  }, [resource.uri, rendition]);
  useEffect(
    () => () => {
      if (saved.current !== undefined) URL.revokeObjectURL(saved.current);
    },
    [],
  );

  const fail = (failure: unknown): void =>
    setError(failure instanceof Error ? failure.message : String(failure));

  const go = async (index: number | undefined): Promise<void> => {
    setError(undefined);
    const part = index === undefined ? undefined : parts[index];
    if (index === undefined || part === undefined) return setShown(undefined);
    if (part.kind === 'chapter') {
      setShown(undefined);
      host.current?.querySelector(`[data-part="${index}"]`)?.scrollIntoView();
      return;
    }
    setBusy(true);
    try {
      const answer = await data.readResource(withQuery(resource.uri, QUERY[part.kind], part.label));
      setShown({ index, text: answer.contents[0]?.text ?? '' });
    } catch (failure) {
      fail(failure);
    } finally {
      setBusy(false);
    }
  };

  const download = async (): Promise<void> => {
    setError(undefined);
    setBusy(true);
    try {
      const answer = await data.readResource(withQuery(resource.uri, 'as', 'bytes'));
      const original = answer.contents[0];
      if (original === undefined) throw new Error('The server answered no original.');
      const bytes =
        original.blob === undefined
          ? new TextEncoder().encode(original.text ?? '')
          : bytesOf(original.blob);
      if (saved.current !== undefined) URL.revokeObjectURL(saved.current);
      saved.current = downloadUrl(bytes);
      const link = document.createElement('a');
      link.href = saved.current;
      link.download = resource.name;
      link.hidden = true;
      host.current?.append(link);
      link.click();
      link.remove();
    } catch (failure) {
      fail(failure);
    } finally {
      setBusy(false);
    }
  };

  const current = shown?.index;
  return (
    <div class="document" ref={host} aria-busy={busy}>
      <div class="document-bar">
        <button class="download-original" onClick={() => void download()} disabled={busy}>
          Download original
        </button>
        {parts.length === 0 ? null : (
          <nav class="document-parts" aria-label="Parts">
            <button
              class={`link${current === undefined ? ' current' : ''}`}
              aria-pressed={current === undefined}
              onClick={() => void go(undefined)}
            >
              All
            </button>
            {parts.map((part, index) => (
              <button
                key={`${part.kind} ${part.label} ${index}`}
                class={`link${current === index ? ' current' : ''}`}
                aria-pressed={current === index}
                onClick={() => void go(index)}
              >
                {title(part)}
              </button>
            ))}
          </nav>
        )}
      </div>
      {error === undefined ? null : (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {shown === undefined ? (
        <>
          {lead.trim() === '' ? null : <MarkdownView text={lead} rendition />}
          {parts.map((part, index) => (
            <section
              key={`${part.kind} ${part.label} ${index}`}
              class="document-part"
              data-part={index}
              aria-label={title(part)}
            >
              <MarkdownView text={part.text} rendition />
            </section>
          ))}
        </>
      ) : (
        <section class="document-part" aria-label={title(parts[shown.index]!)}>
          <MarkdownView text={withoutMarkers(shown.text)} rendition />
        </section>
      )}
    </div>
  );
}
