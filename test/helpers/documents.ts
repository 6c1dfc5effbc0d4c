/**
 * Documents built in code for the document tests and the bench: PDFs (text pages, headings, links,
 * image-only pages, a password-protected one, object loops), DOCX, XLSX (through exceljs), PPTX
 * and EPUB archives written with fflate, and hostile archives (zip bombs, entity expansion).
 */
import { deflateSync, zipSync, type Zippable } from 'fflate';

export interface PdfPage {
  /** A large heading at the top of the page. */
  heading?: string;
  lines?: string[];
  /** A link annotation over the first line. */
  link?: string;
}

function pdfString(text: string): string {
  return `(${text.replace(/\\/g, '\\\\').replace(/\(/g, '\\(').replace(/\)/g, '\\)')})`;
}

/** A PDF with one page per entry; `extraTrailer` adds entries to the trailer (e.g. /Encrypt). */
export function makePdf(
  pages: PdfPage[],
  options: { encrypt?: boolean; loop?: boolean } = {},
): Buffer {
  const objects: string[] = [];
  const add = (body: string): number => objects.push(body);
  const catalog = add('');
  const pagesId = add('');
  const font = add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  const kids: number[] = [];
  for (const page of pages) {
    let stream = 'BT\n';
    let y = 740;
    if (page.heading !== undefined) {
      stream += `/F1 24 Tf 72 ${y} Td ${pdfString(page.heading)} Tj ET\nBT\n`;
      y -= 40;
    }
    stream += `/F1 11 Tf 72 ${y} Td 14 TL\n`;
    for (const line of page.lines ?? []) stream += `${pdfString(line)} Tj T*\n`;
    stream += 'ET\n';
    const content = add(
      `<< /Length ${Buffer.byteLength(stream, 'latin1')} >>\nstream\n${stream}endstream`,
    );
    const annots =
      page.link === undefined
        ? ''
        : ` /Annots [${add(`<< /Type /Annot /Subtype /Link /Rect [72 ${y - 4} 300 ${y + 12}] /Border [0 0 0] /A << /S /URI /URI ${pdfString(page.link)} >> >>`)} 0 R]`;
    kids.push(
      add(
        `<< /Type /Page /Parent ${pagesId} 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 ${font} 0 R >> >> /Contents ${content} 0 R${annots} >>`,
      ),
    );
  }
  objects[catalog - 1] = `<< /Type /Catalog /Pages ${pagesId} 0 R >>`;
  // A loop: the page tree's kids point back at the tree itself.
  const kidRefs = options.loop === true ? `${pagesId} 0 R` : kids.map((k) => `${k} 0 R`).join(' ');
  objects[pagesId - 1] =
    `<< /Type /Pages /Kids [${kidRefs}] /Count ${options.loop === true ? 1000000 : kids.length} >>`;
  let encrypt = '';
  if (options.encrypt === true) {
    const hex = (n: number): string => `<${'ab'.repeat(n)}>`;
    const id = add(
      `<< /Filter /Standard /V 1 /R 2 /Length 40 /P -4 /O ${hex(32)} /U ${hex(32)} >>`,
    );
    encrypt = ` /Encrypt ${id} 0 R /ID [<0123456789abcdef0123456789abcdef> <0123456789abcdef0123456789abcdef>]`;
  }
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) out += `${String(offset).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root ${catalog} 0 R${encrypt} >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const esc = (t: string): string =>
  t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function zip(files: Record<string, string | Uint8Array>): Buffer {
  const entries: Zippable = {};
  for (const [name, body] of Object.entries(files))
    entries[name] = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  return Buffer.from(zipSync(entries));
}

export type DocxBlock =
  | { heading: string; level?: number }
  | { paragraph: string }
  | { bullet: string }
  | { table: string[][] }
  | { link: string; text: string };

/** A Word document with headings (Heading1/2 styles), paragraphs, bullets, a table and links. */
export function makeDocx(blocks: DocxBlock[], options: { bodyPrefix?: string } = {}): Buffer {
  const rels: string[] = [];
  const body = blocks
    .map((block) => {
      if ('heading' in block)
        return `<w:p><w:pPr><w:pStyle w:val="Heading${block.level ?? 1}"/></w:pPr><w:r><w:t>${esc(block.heading)}</w:t></w:r></w:p>`;
      if ('paragraph' in block)
        return `<w:p><w:r><w:t xml:space="preserve">${esc(block.paragraph)}</w:t></w:r></w:p>`;
      if ('bullet' in block)
        return `<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t>${esc(block.bullet)}</w:t></w:r></w:p>`;
      if ('link' in block) {
        const id = `rLink${rels.length + 1}`;
        rels.push(
          `<Relationship Id="${id}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="${esc(block.link)}" TargetMode="External"/>`,
        );
        return `<w:p><w:hyperlink r:id="${id}"><w:r><w:t>${esc(block.text)}</w:t></w:r></w:hyperlink></w:p>`;
      }
      const rows = block.table
        .map(
          (row) =>
            `<w:tr>${row.map((c) => `<w:tc><w:p><w:r><w:t>${esc(c)}</w:t></w:r></w:p></w:tc>`).join('')}</w:tr>`,
        )
        .join('');
      return `<w:tbl>${rows}</w:tbl>`;
    })
    .join('');
  const ns =
    'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
  return zip({
    '[Content_Types].xml': `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/numbering.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.numbering+xml"/></Types>`,
    '_rels/.rels': `${XML}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`,
    'word/_rels/document.xml.rels': `${XML}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rNum" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/numbering" Target="numbering.xml"/>${rels.join('')}</Relationships>`,
    'word/numbering.xml': `${XML}<w:numbering ${ns}><w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/></w:lvl></w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>`,
    'word/document.xml': `${XML}${options.bodyPrefix ?? ''}<w:document ${ns}><w:body>${body}</w:body></w:document>`,
  });
}

export interface Slide {
  title: string;
  bullets?: string[];
  table?: string[][];
  link?: { text: string; url: string };
  notes?: string;
}

/** A PowerPoint deck: a title and bullets per slide, an optional table, link and notes. */
export function makePptx(slides: Slide[]): Buffer {
  const p =
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"';
  const files: Record<string, string> = {};
  const ids: string[] = [];
  const rels: string[] = [];
  slides.forEach((slide, i) => {
    const n = i + 1;
    const slideRels: string[] = [];
    const runs = (text: string): string => `<a:r><a:t>${esc(text)}</a:t></a:r>`;
    let shapes = `<p:sp><p:nvSpPr><p:nvPr><p:ph type="title"/></p:nvPr></p:nvSpPr><p:txBody><a:p>${runs(slide.title)}</a:p></p:txBody></p:sp>`;
    if (slide.bullets !== undefined)
      shapes += `<p:sp><p:nvSpPr><p:nvPr><p:ph idx="1"/></p:nvPr></p:nvSpPr><p:txBody>${slide.bullets.map((b) => `<a:p>${runs(b)}</a:p>`).join('')}</p:txBody></p:sp>`;
    if (slide.link !== undefined) {
      slideRels.push(
        `<Relationship Id="rL" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="${esc(slide.link.url)}" TargetMode="External"/>`,
      );
      shapes += `<p:sp><p:txBody><a:p><a:r><a:rPr><a:hlinkClick r:id="rL"/></a:rPr><a:t>${esc(slide.link.text)}</a:t></a:r></a:p></p:txBody></p:sp>`;
    }
    if (slide.table !== undefined)
      shapes += `<p:graphicFrame><a:graphic><a:graphicData><a:tbl>${slide.table
        .map(
          (row) =>
            `<a:tr>${row.map((c) => `<a:tc><a:txBody><a:p>${runs(c)}</a:p></a:txBody></a:tc>`).join('')}</a:tr>`,
        )
        .join('')}</a:tbl></a:graphicData></a:graphic></p:graphicFrame>`;
    if (slide.notes !== undefined) {
      slideRels.push(
        `<Relationship Id="rN" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/notesSlide" Target="../notesSlides/notesSlide${n}.xml"/>`,
      );
      files[`ppt/notesSlides/notesSlide${n}.xml`] =
        `${XML}<p:notes ${p}><p:cSld><p:spTree><p:sp><p:txBody><a:p>${runs(slide.notes)}</a:p></p:txBody></p:sp></p:spTree></p:cSld></p:notes>`;
    }
    files[`ppt/slides/slide${n}.xml`] =
      `${XML}<p:sld ${p}><p:cSld><p:spTree>${shapes}</p:spTree></p:cSld></p:sld>`;
    files[`ppt/slides/_rels/slide${n}.xml.rels`] =
      `${XML}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${slideRels.join('')}</Relationships>`;
    ids.push(`<p:sldId id="${255 + n}" r:id="rS${n}"/>`);
    rels.push(
      `<Relationship Id="rS${n}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide" Target="slides/slide${n}.xml"/>`,
    );
  });
  files['ppt/presentation.xml'] =
    `${XML}<p:presentation ${p}><p:sldIdLst>${ids.join('')}</p:sldIdLst></p:presentation>`;
  files['ppt/_rels/presentation.xml.rels'] =
    `${XML}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${rels.join('')}</Relationships>`;
  files['[Content_Types].xml'] =
    `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`;
  return zip(files);
}

/** An EPUB with one XHTML chapter per entry. */
export function makeEpub(title: string, chapters: { title: string; html: string }[]): Buffer {
  const files: Record<string, string> = {
    mimetype: 'application/epub+zip',
    'META-INF/container.xml': `${XML}<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container" version="1.0"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>`,
  };
  const items = chapters
    .map(
      (_, i) =>
        `<item id="c${i + 1}" href="text/c${i + 1}.xhtml" media-type="application/xhtml+xml"/>`,
    )
    .join('');
  const spine = chapters.map((_, i) => `<itemref idref="c${i + 1}"/>`).join('');
  files['OEBPS/content.opf'] =
    `${XML}<package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>${esc(title)}</dc:title></metadata><manifest>${items}</manifest><spine>${spine}</spine></package>`;
  chapters.forEach((c, i) => {
    files[`OEBPS/text/c${i + 1}.xhtml`] =
      `${XML}<!DOCTYPE html><html xmlns="http://www.w3.org/1999/xhtml"><head><title>${esc(c.title)}</title></head><body>${c.html}</body></html>`;
  });
  return zip(files);
}

/** An XLSX workbook, written by exceljs: sheets by name, rows of cells. */
export async function makeXlsx(sheets: Record<string, (string | number)[][]>): Promise<Buffer> {
  const ExcelJS = (await import('exceljs')).default;
  const workbook = new ExcelJS.Workbook();
  for (const [name, rows] of Object.entries(sheets)) {
    const sheet = workbook.addWorksheet(name);
    for (const row of rows) sheet.addRow(row);
  }
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

/**
 * A zip whose one entry inflates to `size` zero bytes; `lie` declares a small size instead (the
 * central directory then understates what inflating produces).
 */
export function makeZipBomb(
  name: string,
  size: number,
  options: { lie?: boolean; extra?: Record<string, string> } = {},
): Buffer {
  const data = deflateSync(new Uint8Array(size), { level: 9 });
  const files: Record<string, Uint8Array> = {};
  for (const [n, body] of Object.entries(options.extra ?? {}))
    files[n] = new TextEncoder().encode(body);
  const base = zipSync(files);
  // Write our own archive: the extra entries (copied as fflate made them) plus the bomb.
  const nameBytes = new TextEncoder().encode(name);
  const declared = options.lie === true ? 1000 : size;
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(8, 8);
  local.writeUInt32LE(data.length, 18);
  local.writeUInt32LE(declared, 22);
  local.writeUInt16LE(nameBytes.length, 26);
  const prior = Buffer.from(base);
  const eocdAt = prior.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const cdOffset = prior.readUInt32LE(eocdAt + 16);
  const cdSize = prior.readUInt32LE(eocdAt + 12);
  const count = prior.readUInt16LE(eocdAt + 10);
  const entriesPart = prior.subarray(0, cdOffset);
  const priorCd = prior.subarray(cdOffset, cdOffset + cdSize);
  const bombOffset = entriesPart.length;
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(8, 10);
  central.writeUInt32LE(data.length, 20);
  central.writeUInt32LE(declared, 24);
  central.writeUInt16LE(nameBytes.length, 28);
  central.writeUInt32LE(bombOffset, 42);
  const body = Buffer.concat([entriesPart, local, nameBytes, data]);
  const cd = Buffer.concat([priorCd, central, nameBytes]);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(count + 1, 8);
  eocd.writeUInt16LE(count + 1, 10);
  eocd.writeUInt32LE(cd.length, 12);
  eocd.writeUInt32LE(body.length, 16);
  return Buffer.concat([body, cd, eocd]);
}

/** A DOCX whose document declares nested entities ("billion laughs"). */
export function makeEntityBombDocx(): Buffer {
  const dtd =
    '<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>';
  return makeDocx([{ paragraph: 'x' }], { bodyPrefix: dtd });
}
