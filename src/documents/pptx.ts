/**
 * PowerPoint (PPTX) → Markdown, parsed here from the slides' DrawingML: slides in presentation
 * order (presentation.xml's slide list through its relationships), each with its title as a
 * heading, its text paragraphs (bulleted when they sit in a body placeholder), its tables as
 * Markdown tables, its hyperlinks, and its speaker notes. Bounded: the archive is read under the
 * inflation cap (zip.ts), entity declarations are refused (xml.ts), the parsing is linear.
 */
import { MarkdownBuilder, table } from './markdown.js';
import { pickRange } from './ranges.js';
import { DocumentError, type DocumentParts, type Rendition, type RenderLimits } from './types.js';
import { attribute, decodeXmlText, refuseEntities, relationships } from './xml.js';
import { ZipArchive } from './zip.js';

export async function renderPptx(
  bytes: Uint8Array,
  parts: DocumentParts,
  limits: RenderLimits,
): Promise<Rendition> {
  if (parts.pages !== undefined || parts.sheet !== undefined || parts.range !== undefined)
    throw new DocumentError(
      'invalid_argument',
      'a presentation has slides, not pages or sheets: use ?slides=START-END',
      {
        argument: parts.pages !== undefined ? 'pages' : 'sheet',
      },
    );
  const archive = new ZipArchive(bytes, limits.maxInflatedBytes);
  const presentation = archive.text('ppt/presentation.xml');
  if (presentation === undefined)
    throw new DocumentError(
      'invalid_document',
      'not a PowerPoint presentation (no ppt/presentation.xml)',
    );
  refuseEntities(presentation, 'ppt/presentation.xml');
  const rels = relationships(
    archive.text('ppt/_rels/presentation.xml.rels'),
    'ppt/presentation.xml',
  );
  const slides: string[] = [];
  for (const match of presentation.matchAll(/<p:sldId\b[^>]*>/g)) {
    const target = rels.get(attribute(match[0], 'r:id') ?? '');
    if (target !== undefined && archive.has(target)) slides.push(target);
  }
  if (parts.outline === true)
    return { kind: 'pptx', markdown: '', outline: { slides: slides.length }, markers: [] };
  const [first, last] = pickRange(parts.slides, slides.length, 'slides');
  const out = new MarkdownBuilder(limits.maxOutputChars);
  for (let number = first; number <= last; number += 1) {
    const path = slides[number - 1]!;
    const xml = archive.text(path) ?? '';
    refuseEntities(xml, path);
    const slideRels = relationships(archive.text(relsPath(path)), path);
    const { title, body } = slideMarkdown(xml, slideRels);
    out.part(
      'slide',
      String(number),
      title === '' ? `Slide ${number}` : `Slide ${number}: ${title}`,
    );
    out.block(body);
    const notesPath = [...slideRels.values()].find((t) =>
      /notesSlides\/notesSlide\d+\.xml$/.test(t),
    );
    const notes = notesPath === undefined ? undefined : archive.text(notesPath);
    if (notes !== undefined) {
      refuseEntities(notes, notesPath!);
      const text = paragraphs(
        notes.replace(/<p:sp>(?:(?!<\/p:sp>)[\s\S])*?type="sldNum"[\s\S]*?<\/p:sp>/g, ''),
        new Map(),
      )
        .map((p) => p.text)
        .filter((t) => t !== '')
        .join('\n');
      if (text !== '') out.block(`Notes:\n\n${text}`);
    }
  }
  return {
    kind: 'pptx',
    markdown: out.toString(),
    outline: { slides: slides.length },
    markers: out.markers,
  };
}

function relsPath(part: string): string {
  const slash = part.lastIndexOf('/');
  return `${part.slice(0, slash)}/_rels/${part.slice(slash + 1)}.rels`;
}

/** A slide's title (its title placeholder's text) and the Markdown of everything else on it. */
function slideMarkdown(xml: string, rels: Map<string, string>): { title: string; body: string } {
  let title = '';
  const blocks: string[] = [];
  // Shapes (p:sp) and graphic frames (tables) in document order.
  for (const match of xml.matchAll(/<p:sp\b[\s\S]*?<\/p:sp>|<a:tbl\b[\s\S]*?<\/a:tbl>/g)) {
    const shape = match[0];
    if (shape.startsWith('<a:tbl')) {
      blocks.push(tableMarkdown(shape, rels));
      continue;
    }
    const placeholder = /<p:ph\b[^>]*>/.exec(shape)?.[0];
    const type = placeholder === undefined ? undefined : (attribute(placeholder, 'type') ?? 'body');
    const lines = paragraphs(shape, rels).filter((p) => p.text !== '');
    if (lines.length === 0) continue;
    if ((type === 'title' || type === 'ctrTitle') && title === '') {
      title = lines.map((l) => l.text).join(' ');
      continue;
    }
    const bulleted = type === 'body' || lines.some((l) => l.bullet);
    blocks.push(
      lines
        .map((l) => (bulleted ? `${'  '.repeat(l.level)}- ${l.text}` : l.text))
        .join(bulleted ? '\n' : '\n\n'),
    );
  }
  return { title, body: blocks.join('\n\n') };
}

/** The paragraphs (a:p) of a fragment: their text runs joined, hyperlinks as Markdown links. */
function paragraphs(
  xml: string,
  rels: Map<string, string>,
): { text: string; level: number; bullet: boolean }[] {
  const result: { text: string; level: number; bullet: boolean }[] = [];
  for (const match of xml.matchAll(
    /<a:p>([\s\S]*?)<\/a:p>|<a:p\b[^>]*\/>|<a:p\s[^>]*>([\s\S]*?)<\/a:p>/g,
  )) {
    const inner = match[1] ?? match[2] ?? '';
    const properties = /<a:pPr\b[^>]*>/.exec(inner)?.[0];
    const level = Number(properties === undefined ? 0 : (attribute(properties, 'lvl') ?? 0));
    const bullet = /<a:bu(Char|AutoNum)\b/.test(inner);
    let text = '';
    for (const run of inner.matchAll(
      /<a:r>([\s\S]*?)<\/a:r>|<a:br\s*\/>|<a:fld\b[\s\S]*?<\/a:fld>/g,
    )) {
      if (run[0].startsWith('<a:br')) {
        text += ' ';
        continue;
      }
      const piece = decodeXmlText(/<a:t>([\s\S]*?)<\/a:t>/.exec(run[0])?.[1] ?? '');
      const link = /<a:hlinkClick\b[^>]*>/.exec(run[0])?.[0];
      const target = link === undefined ? undefined : rels.get(attribute(link, 'r:id') ?? '');
      text +=
        target !== undefined && /^(https?|mailto):/i.test(target) ? `[${piece}](${target})` : piece;
    }
    result.push({
      text: text.trim(),
      level: Number.isFinite(level) ? Math.min(level, 8) : 0,
      bullet,
    });
  }
  return result;
}

function tableMarkdown(xml: string, rels: Map<string, string>): string {
  const rows: string[][] = [];
  for (const row of xml.matchAll(/<a:tr\b[\s\S]*?<\/a:tr>/g)) {
    const cells: string[] = [];
    for (const cell of row[0].matchAll(/<a:tc\b[\s\S]*?<\/a:tc>|<a:tc\b[^>]*\/>/g))
      cells.push(
        paragraphs(cell[0], rels)
          .map((p) => p.text)
          .filter((t) => t !== '')
          .join(' '),
      );
    rows.push(cells);
  }
  return table(rows);
}
