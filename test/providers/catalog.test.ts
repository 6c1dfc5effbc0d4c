/**
 * The provider catalog is the one way a source is built. Every row's folder answers the catalog
 * (its options load, its module builds), every type is exported from the package and runs the
 * contract suite, and no code outside a row's `source.ts` calls a provider factory — so adding a
 * source type is its folder plus one row, and nothing else can build one behind the catalog's back.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as lib from '../../src/index.js';
import { SOURCE_CATALOG, catalogRow, sourceModule } from '../../src/providers/catalog.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const src = join(repo, 'src');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

/** Code lines of a file, comments left out (a JSDoc example may show a factory call). */
function codeLines(path: string): { line: number; text: string }[] {
  const lines = readFileSync(path, 'utf8').split('\n');
  return lines
    .map((text, index) => ({ line: index + 1, text }))
    .filter(({ text }) => !/^\s*(\*|\/\/|\/\*)/.test(text));
}

/** The provider factories the provider folders export: `filesProvider` from providers/files, … */
function factories(): Map<string, string> {
  const found = new Map<string, string>();
  for (const folder of readdirSync(join(src, 'providers'), { withFileTypes: true })) {
    if (!folder.isDirectory() || folder.name === 'utils') continue;
    const text = readFileSync(join(src, 'providers', folder.name, 'index.ts'), 'utf8');
    for (const match of text.matchAll(/export (?:function|const) ([a-z][A-Za-z0-9]*Provider)\b/g))
      found.set(match[1]!, folder.name);
  }
  return found;
}

describe('the provider catalog', () => {
  it('has a row for every provider folder, and every row names its folder', () => {
    const folders = readdirSync(join(src, 'providers'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && entry.name !== 'utils')
      .map((entry) => entry.name)
      .sort();
    expect(SOURCE_CATALOG.map((row) => row.type).sort()).toEqual(folders);
  });

  it.each(SOURCE_CATALOG.map((row) => [row.type, row] as const))(
    'loads the %s row: its options parse, its module builds, and skills rows give a base URI',
    async (type, row) => {
      const options = await row.options();
      expect(options.safeParse({ surely: 'not an option' }).success).toBe(false);
      const module = await sourceModule(type);
      expect(typeof module.build).toBe('function');
      expect(typeof module.skillsBase).toBe(row.skills ? 'function' : 'undefined');
    },
  );

  it('refuses an unknown source type with its name', () => {
    expect(() => catalogRow('ftp')).toThrow("unknown source type 'ftp'");
  });

  it.each(SOURCE_CATALOG.map((row) => [row.type]))(
    'exports the %s provider factory from the package',
    (type) => {
      expect(typeof (lib as Record<string, unknown>)[`${type}Provider`]).toBe('function');
    },
  );

  it.each(SOURCE_CATALOG.map((row) => [row.type]))(
    'runs the contract suite against a %s fixture',
    (type) => {
      const suites = filesUnder(join(repo, 'test/providers'))
        .filter((path) => path.endsWith('.test.ts'))
        .flatMap((path) =>
          [...readFileSync(path, 'utf8').matchAll(/testProvider\(\{\s*name: '([^']+)'/g)].map(
            (match) => match[1]!,
          ),
        );
      expect(suites.filter((name) => name === type || name.startsWith(`${type} `))).not.toEqual([]);
    },
  );

  it("is the only caller of a provider factory in src/ (each is called by its own row's source.ts)", () => {
    const known = factories();
    expect([...known.values()].sort()).toEqual(SOURCE_CATALOG.map((row) => row.type).sort());
    const calls: string[] = [];
    for (const path of filesUnder(src)) {
      const file = relative(src, path);
      for (const { line, text } of codeLines(path)) {
        for (const match of text.matchAll(/\b([a-z][A-Za-z0-9]*Provider)\(/g)) {
          const folder = known.get(match[1]!);
          if (folder === undefined || /\bfunction\s+$/.test(text.slice(0, match.index))) continue;
          if (file === join('providers', folder, 'source.ts')) continue;
          calls.push(`${file}:${line}: ${match[1]}(`);
        }
      }
    }
    expect(calls).toEqual([]);
  });
});
