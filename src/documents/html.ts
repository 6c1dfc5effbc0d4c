/**
 * HTML → Markdown with `node-html-markdown` (a fast translator over `node-html-parser`, no DOM, no
 * script engine). Scripts, styles and embedded frames are dropped before translation; remote
 * references (images, links) stay as written in the Markdown and are never fetched. Data-URI images
 * are dropped (their bytes would only bloat the rendition).
 */
import { MarkdownBuilder } from './markdown.js';
import type { Rendition, RenderLimits } from './types.js';

/** Elements whose content is never text a reader sees. */
const DROPPED =
  /<(script|style|noscript|template|iframe|object|embed|svg|canvas)\b[\s\S]*?<\/\1\s*>/gi;

/** Converts an HTML fragment or page to Markdown. */
export async function htmlToMarkdown(html: string): Promise<string> {
  const { NodeHtmlMarkdown } = await import('node-html-markdown');
  const cleaned = html.replace(DROPPED, '').replace(/<(script|style)\b[^>]*\/?>/gi, '');
  return NodeHtmlMarkdown.translate(cleaned, { keepDataImages: false, maxConsecutiveNewlines: 2 });
}

/** The title of an HTML page, if it has one. */
export function htmlTitle(html: string): string | undefined {
  const found = /<title\b[^>]*>([\s\S]{0,500}?)<\/title>/i.exec(html);
  const title = found?.[1]?.replace(/\s+/g, ' ').trim();
  return title === undefined || title === '' ? undefined : title;
}

export async function renderHtml(bytes: Uint8Array, limits: RenderLimits): Promise<Rendition> {
  const html = new TextDecoder('utf-8').decode(bytes);
  const out = new MarkdownBuilder(limits.maxOutputChars);
  const title = htmlTitle(html);
  const markdown = await htmlToMarkdown(html);
  if (title !== undefined && !markdown.trimStart().startsWith('# ')) out.block(`# ${title}`);
  out.block(markdown);
  return { kind: 'html', markdown: out.toString(), outline: {}, markers: out.markers };
}
