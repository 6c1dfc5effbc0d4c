/**
 * EPUB → Markdown: the package (container.xml → the OPF) gives the reading order (spine); each
 * XHTML chapter is translated by html.ts, under a chapter marker. Remote references stay links and
 * are never fetched; entity declarations are refused; the archive is read under the inflation cap.
 */
import { htmlTitle, htmlToMarkdown } from './html.js';
import { MarkdownBuilder } from './markdown.js';
import { DocumentError, type Rendition, type RenderLimits } from './types.js';
import { attribute, decodeXmlText, refuseEntities, resolveZipPath } from './xml.js';
import { ZipArchive } from './zip.js';

export async function renderEpub(bytes: Uint8Array, limits: RenderLimits): Promise<Rendition> {
  const archive = new ZipArchive(bytes, limits.maxInflatedBytes);
  const container = archive.text('META-INF/container.xml');
  if (container === undefined)
    throw new DocumentError('invalid_document', 'not an EPUB (no META-INF/container.xml)');
  refuseEntities(container, 'META-INF/container.xml');
  const rootfile = /<rootfile\b[^>]*>/.exec(container)?.[0];
  const opfPath = rootfile === undefined ? undefined : attribute(rootfile, 'full-path');
  const opf = opfPath === undefined ? undefined : archive.text(opfPath);
  if (opf === undefined || opfPath === undefined)
    throw new DocumentError('invalid_document', 'the EPUB names no readable package document');
  refuseEntities(opf, opfPath);
  const manifest = new Map<string, string>();
  for (const item of opf.matchAll(/<item\b[^>]*>/g)) {
    const id = attribute(item[0], 'id');
    const href = attribute(item[0], 'href');
    if (id !== undefined && href !== undefined)
      manifest.set(id, resolveZipPath(opfPath, decodeURIComponent(href)));
  }
  const out = new MarkdownBuilder(limits.maxOutputChars);
  const title = /<dc:title\b[^>]*>([\s\S]*?)<\/dc:title>/.exec(opf)?.[1];
  if (title !== undefined && title.trim() !== '') out.block(`# ${decodeXmlText(title.trim())}`);
  let chapter = 0;
  for (const ref of opf.matchAll(/<itemref\b[^>]*>/g)) {
    const path = manifest.get(attribute(ref[0], 'idref') ?? '');
    const xhtml = path === undefined ? undefined : archive.text(path);
    if (xhtml === undefined) continue;
    refuseEntities(xhtml, path!);
    chapter += 1;
    out.part('chapter', String(chapter));
    const heading = htmlTitle(xhtml);
    const markdown = await htmlToMarkdown(xhtml);
    if (heading !== undefined && !/^#{1,6} /m.test(markdown)) out.block(`## ${heading}`);
    out.block(markdown);
  }
  return {
    kind: 'epub',
    markdown: out.toString(),
    outline: { chapters: chapter },
    markers: out.markers,
  };
}
