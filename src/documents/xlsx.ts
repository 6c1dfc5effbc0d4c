/**
 * Excel (XLSX) → Markdown with `exceljs`: each sheet a heading and a table of its used cells (the
 * first used row as the header), cells as Excel shows them (`cell.text`: formatted values, formula
 * results, hyperlinks as their text). `?sheet=` picks one sheet, `&range=A1:D20` a block of it.
 * exceljs reads the archive through JSZip, so it is given a copy inflated under the cap.
 */
import { columnName, parseCellRange, type CellRange } from './cells.js';
import { MarkdownBuilder, table } from './markdown.js';
import { repack } from './repack.js';
import { DocumentError, type DocumentParts, type Rendition, type RenderLimits } from './types.js';
import { ZipArchive } from './zip.js';

/** Most rows × columns one sheet contributes before its table would only be noise. */
const MAX_CELLS = 2_000_000;

interface Sheet {
  name: string;
  dimensions: { top: number; left: number; bottom: number; right: number } | undefined;
  getCell(row: number, col: number): { text: string };
}

export async function renderXlsx(
  bytes: Uint8Array,
  parts: DocumentParts,
  limits: RenderLimits,
): Promise<Rendition> {
  if (parts.pages !== undefined || parts.slides !== undefined)
    throw new DocumentError(
      'invalid_argument',
      'a spreadsheet has sheets, not pages or slides: use ?sheet=NAME',
      {
        argument: parts.pages !== undefined ? 'pages' : 'slides',
      },
    );
  const archive = new ZipArchive(bytes, limits.maxInflatedBytes);
  if (!archive.has('xl/workbook.xml'))
    throw new DocumentError('invalid_document', 'not an Excel workbook (no xl/workbook.xml)');
  const safe = repack(archive, (name) => !name.startsWith('xl/media/'));
  const ExcelJS = (await import('exceljs')).default;
  const workbook = new ExcelJS.Workbook();
  try {
    await workbook.xlsx.load(Buffer.from(safe.buffer, safe.byteOffset, safe.byteLength) as never);
  } catch (error) {
    throw new DocumentError(
      'invalid_document',
      `not a readable workbook: ${(error as Error).message}`,
    );
  }
  const sheets = workbook.worksheets as unknown as Sheet[];
  const names = sheets.map((s) => s.name);
  if (parts.outline === true)
    return { kind: 'xlsx', markdown: '', outline: { sheets: names }, markers: [] };
  let chosen = sheets;
  if (parts.sheet !== undefined) {
    chosen = sheets.filter((s) => s.name === parts.sheet);
    if (chosen.length === 0)
      throw new DocumentError(
        'invalid_argument',
        `sheet=${parts.sheet} is not a sheet of this workbook; its sheets are ${names.map((n) => JSON.stringify(n)).join(', ')}`,
        { argument: 'sheet', valid: names },
      );
  } else if (parts.range !== undefined) {
    if (sheets.length !== 1)
      throw new DocumentError(
        'invalid_argument',
        'range= needs sheet= (this workbook has several sheets)',
        {
          argument: 'range',
          valid: names,
        },
      );
  }
  const range = parts.range === undefined ? undefined : parseCellRange(parts.range);
  const out = new MarkdownBuilder(limits.maxOutputChars);
  for (const sheet of chosen) {
    out.part('sheet', sheet.name, sheet.name);
    out.block(sheetTable(sheet, range));
  }
  return {
    kind: 'xlsx',
    markdown: out.toString(),
    outline: { sheets: names },
    markers: out.markers,
  };
}

function sheetTable(sheet: Sheet, range: CellRange | undefined): string {
  const used = sheet.dimensions;
  const area = range ?? (used === undefined || used.bottom === 0 ? undefined : used);
  if (area === undefined) return '*(empty sheet)*';
  const cells = (area.bottom - area.top + 1) * (area.right - area.left + 1);
  if (cells > MAX_CELLS)
    throw new DocumentError(
      'too_large',
      `sheet ${sheet.name} spans ${cells} cells, over ${MAX_CELLS}; read a block with &range=A1:Z1000`,
      {
        measure: 'cells',
        size: cells,
        limit: MAX_CELLS,
      },
    );
  const rows: string[][] = [];
  if (range !== undefined) {
    // A block: its own column letters as the header, then its rows.
    const header = [
      '',
      ...Array.from({ length: area.right - area.left + 1 }, (_, i) => columnName(area.left + i)),
    ];
    rows.push(header);
    for (let r = area.top; r <= area.bottom; r += 1)
      rows.push([String(r), ...rowCells(sheet, r, area)]);
  } else {
    for (let r = area.top; r <= area.bottom; r += 1) rows.push(rowCells(sheet, r, area));
  }
  return table(rows);
}

function rowCells(sheet: Sheet, row: number, area: CellRange): string[] {
  const values: string[] = [];
  for (let c = area.left; c <= area.right; c += 1) values.push(sheet.getCell(row, c).text ?? '');
  return values;
}
