/**
 * Optional OCR through Debian's `tesseract` (and `pdftoppm` from poppler-utils to turn a scanned
 * PDF page into an image). Used only when the programs are on PATH; run with `execFile` (never a
 * shell), each call under a time limit, on files in a private temporary folder removed afterwards.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const found = new Map<string, boolean>();

/** Whether `program` is an executable on PATH (remembered per process). */
export function onPath(program: string): boolean {
  let known = found.get(program);
  if (known === undefined) {
    known = (process.env['PATH'] ?? '').split(delimiter).some((dir) => {
      try {
        accessSync(join(dir, program), constants.X_OK);
        return dir !== '';
      } catch {
        return false;
      }
    });
    found.set(program, known);
  }
  return known;
}

/** The text `tesseract` reads in the image file `path`. */
async function tesseract(path: string, timeoutMs: number): Promise<string> {
  const { stdout } = await run('tesseract', [path, 'stdout', '--psm', '3'], {
    timeout: timeoutMs,
    maxBuffer: 16 * 1024 * 1024,
    env: { ...process.env, OMP_THREAD_LIMIT: '1' },
  });
  return stdout.replace(/\f/g, '').trim();
}

/** OCR of an image's bytes, or undefined when `tesseract` is not installed. */
export async function ocrImage(bytes: Uint8Array, timeoutMs: number): Promise<string | undefined> {
  if (!onPath('tesseract')) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'reservoir-ocr-'));
  try {
    const file = join(dir, 'image');
    writeFileSync(file, bytes);
    return await tesseract(file, timeoutMs);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** OCR of PDF pages (1-based) by number; empty when `tesseract` or `pdftoppm` is missing. */
export async function ocrPdfPages(
  bytes: Uint8Array,
  pages: number[],
  timeoutMs: number,
): Promise<Map<number, string>> {
  const texts = new Map<number, string>();
  if (!onPath('tesseract') || !onPath('pdftoppm')) return texts;
  const dir = mkdtempSync(join(tmpdir(), 'reservoir-ocr-'));
  try {
    const pdf = join(dir, 'document.pdf');
    writeFileSync(pdf, bytes);
    for (const page of pages) {
      const prefix = join(dir, `page-${page}`);
      const args = [
        '-r',
        '200',
        '-gray',
        '-png',
        '-f',
        String(page),
        '-l',
        String(page),
        pdf,
        prefix,
      ];
      await run('pdftoppm', args, { timeout: timeoutMs });
      const image = readdirSync(dir).find(
        (name) => name.startsWith(`page-${page}`) && name.endsWith('.png'),
      );
      if (image !== undefined) texts.set(page, await tesseract(join(dir, image), timeoutMs));
    }
    return texts;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
