// The rule matcher behind exclusions (node-ignore) remembers every path it tested; IgnoreRules makes
// it forget now and then, so a listing of a million files does not leave a million verdicts on the
// heap — and the verdicts stay right across the forgetting.
import { describe, expect, it } from 'vitest';
import { IgnoreRules } from '../../src/providers/files/ignore.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';

/** The number of verdicts a matcher holds (node-ignore's private `_testCache`). */
function remembered(rules: IgnoreRules, matcher: 'secrets' | 'exclude'): number {
  const ignore = (rules as unknown as Record<string, { _testCache?: object }>)[matcher];
  expect(ignore?._testCache, `node-ignore's ${matcher} cache`).toBeTypeOf('object');
  return Object.keys(ignore!._testCache!).length;
}

describe('exclusion rules over a very large listing', () => {
  it('keep a bounded number of remembered verdicts, and still exclude secrets and excluded paths', () => {
    const root = makeTempDir('reservoir-ignore-');
    try {
      const rules = new IgnoreRules(root, { exclude: ['build/'] });
      const wrong: string[] = [];
      for (let i = 0; i < 60_000; i += 1) {
        const name = i % 5_000 === 0 ? '.env' : `f${i}.txt`;
        const rel = `d${i % 1000}/${name}`;
        if (rules.excluded([], rel, name, false) !== (name === '.env')) wrong.push(rel);
      }
      expect(wrong).toEqual([]);
      expect(rules.excluded([], 'build', 'build', true)).toBe(true);
      expect(rules.excluded([], 'src/.npmrc', '.npmrc', false)).toBe(true);
      expect(rules.excluded([], 'src/ok.md', 'ok.md', false)).toBe(false);
      // Without forgetting, each matcher would hold 61,000 verdicts (60,000 paths, 1,000 directories).
      expect(remembered(rules, 'secrets')).toBeLessThan(45_000);
      expect(remembered(rules, 'exclude')).toBeLessThan(45_000);
    } finally {
      removeTree(root);
    }
  });
});
