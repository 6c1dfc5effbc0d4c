// No source file runs over 400 lines (formatted): past that a file holds more than one concern and
// the next reader trips on it. The failure names every file over the bound with its line count.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/build.js';

const MAX_LINES = 400;
const SRC = join(REPO_ROOT, 'src');

/** Every TypeScript file under src/, as a path relative to the repository. */
function sourceFiles(): string[] {
  return (readdirSync(SRC, { recursive: true }) as string[])
    .filter((rel) => /\.tsx?$/.test(rel))
    .map((rel) => join('src', rel))
    .sort();
}

/** Lines in `text` as an editor counts them: a final newline ends the last line, it adds none. */
function lineCount(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

describe('source files', () => {
  it(`are at most ${MAX_LINES} lines each`, () => {
    const files = sourceFiles();
    expect(files.length).toBeGreaterThan(100);
    const over = files
      .map((file) => ({ file, lines: lineCount(readFileSync(join(REPO_ROOT, file), 'utf8')) }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ file, lines }) => `${file}: ${lines} lines`);
    expect(over, `files over ${MAX_LINES} lines`).toEqual([]);
  });
});
