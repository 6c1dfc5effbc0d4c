// docs/design.md's layout block names files beside the folders that hold them; this pins every
// name to a file that exists, so the block cannot drift from src/ as files move or are renamed.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/build.js';

const design = readFileSync(join(REPO_ROOT, 'docs/design.md'), 'utf8');
const block = /```\nsrc\/\n([\s\S]*?)```/.exec(design)?.[1] ?? '';
const files = new Set(
  (readdirSync(join(REPO_ROOT, 'src'), { recursive: true }) as string[]).map((rel) =>
    rel.split('/').at(-1),
  ),
);

describe('docs/design.md', () => {
  it('has the src/ layout block', () => {
    expect(block.split('\n').length).toBeGreaterThan(20);
  });

  it('names only files that exist under src/ in its layout block', () => {
    // Bare names only: a path (test/api/…) points outside src/ and is left to its own test.
    const named = [...block.matchAll(/(?<![\w./-])([\w.-]+\.tsx?)\b/g)].map((m) => m[1]!);
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((name) => !files.has(name))).toEqual([]);
  });
});
