/**
 * Word (DOCX) → Markdown: `mammoth` maps Word's styles to semantic HTML (headings, lists, tables,
 * links), which html.ts turns into Markdown. Images are left out (their alt text is kept). Mammoth
 * reads the archive through JSZip, so it is given a copy inflated under the cap (repack.ts).
 */
import { htmlToMarkdown } from './html.js';
import { MarkdownBuilder } from './markdown.js';
import { repack } from './repack.js';
import { DocumentError, type Rendition, type RenderLimits } from './types.js';
import { ZipArchive } from './zip.js';

export async function renderDocx(bytes: Uint8Array, limits: RenderLimits): Promise<Rendition> {
  const archive = new ZipArchive(bytes, limits.maxInflatedBytes);
  if (!archive.has('word/document.xml'))
    throw new DocumentError('invalid_document', 'not a Word document (no word/document.xml)');
  const safe = repack(archive, (name) => !name.startsWith('word/media/'));
  const mammoth = (await import('mammoth')).default;
  const result = await mammoth.convertToHtml(
    { buffer: Buffer.from(safe.buffer, safe.byteOffset, safe.byteLength) },
    { convertImage: mammoth.images.imgElement(() => Promise.resolve({ src: '' })) },
  );
  const out = new MarkdownBuilder(limits.maxOutputChars);
  out.block(await htmlToMarkdown(result.value));
  return { kind: 'docx', markdown: out.toString(), outline: {}, markers: out.markers };
}
