// A rule pattern and a URI meet in one match form: every spelling of a name in a rule (as typed,
// percent-encoded in either case, NFC or NFD, with glob characters escaped) matches the URIs
// providers build for it, and nothing else; `%2F` in a name is never a path separator; the glob
// keeps its meaning (`*` within a segment, `**` across them, `?`, sets, alternatives).
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { matchForm } from '../../src/core/match-form.js';
import { compileRulePattern } from '../../src/core/rule-pattern.js';

const file = (path: string): string => pathToFileURL(path).href;
const matches = (pattern: string, uri: string): boolean =>
  compileRulePattern(pattern).test(matchForm(uri));

describe('compileRulePattern', () => {
  it('matches a name in every spelling a person may type', () => {
    const spellings: [string[], string][] = [
      [['café', 'caf%C3%A9', 'caf%c3%a9', 'cafe\u0301', 'cafe%CC%81'], 'café'],
      [['café', 'cafe\u0301'], 'cafe\u0301'],
      [['my docs', 'my%20docs'], 'my docs'],
      [['a#b', 'a%23b', 'a\\#b'], 'a#b'],
      [['100%', '100%25', '100\\%'], '100%'],
      [['a%3Fb', 'a\\?b'], 'a?b'],
      [['a+b', 'a%2Bb'], 'a+b'],
      [['%5Bdraft%5D', '\\[draft\\]'], '[draft]'],
      [['a%2Ab', 'a\\*b'], 'a*b'],
      [['my (copy)', 'my%20(copy)'], 'my (copy)'],
    ];
    for (const [written, name] of spellings) {
      for (const spelling of written) {
        expect(
          matches(`file:///srv/${spelling}/**`, file(`/srv/${name}/x.md`)),
          `${spelling} → ${name}`,
        ).toBe(true);
        expect(
          matches(`file:///**/${spelling}/**`, file(`/srv/deep/${name}/x.md`)),
          `**/${spelling} → ${name}`,
        ).toBe(true);
        expect(
          matches(`file:///srv/${spelling}/**`, file('/srv/other/x.md')),
          `${spelling} → other`,
        ).toBe(false);
      }
    }
  });

  it('matches the encodings other providers use for the same name (git and s3 encode + and [)', () => {
    expect(matches('git://repo/*/a+b/**', 'git://repo/main/a%2Bb/x')).toBe(true);
    expect(matches('s3://bucket/[x]/**', 's3://bucket/%5Bx%5D/k')).toBe(false);
    expect(matches('s3://bucket/%5Bx%5D/**', 's3://bucket/%5Bx%5D/k')).toBe(true);
  });

  it('never lets a / in a rule match a %2F inside a name, nor an escaped glob character act as a glob', () => {
    expect(matches('file:///x/a/b', 'file:///x/a%2Fb')).toBe(false);
    expect(matches('file:///x/a/**', 'file:///x/a%2Fb')).toBe(false);
    expect(matches('file:///x/a%2Fb', 'file:///x/a%2fb')).toBe(true);
    expect(matches('file:///x/*', 'file:///x/a%2Fb')).toBe(true);
    expect(matches('file:///x/a%2Ab/**', file('/x/axb/y'))).toBe(false);
    expect(matches('file:///x/a\\?b', file('/x/axb'))).toBe(false);
    expect(matches('file:///x/a?b', file('/x/axb'))).toBe(true);
    expect(matches('file:///x/a?b', file('/x/a#b'))).toBe(true);
  });

  it('keeps glob meaning: * within a segment, ** across segments, sets and alternatives', () => {
    expect(matches('file:///srv/docs/**', 'file:///srv/docs')).toBe(true);
    expect(matches('file:///srv/docs/**', 'file:///srv/docs/a/b')).toBe(true);
    expect(matches('file:///srv/docs/**', 'file:///srv/docs-x/a')).toBe(false);
    expect(matches('file:///srv/*', 'file:///srv/')).toBe(false);
    expect(matches('file:///srv/*', 'file:///srv/a/b')).toBe(false);
    expect(matches('file:///srv/**/*.env', 'file:///srv/.env')).toBe(true);
    expect(matches('file:///a/**/b', 'file:///a/b')).toBe(true);
    expect(matches('file:///a/**/b', 'file:///a/x/y/b')).toBe(true);
    expect(matches('file:///x/[!a]', 'file:///x/b')).toBe(true);
    expect(matches('file:///x/[!a]', 'file:///x/a')).toBe(false);
    expect(matches('file:///x/{a,b}/**', 'file:///x/b/c')).toBe(true);
    expect(matches('file:///x/{a,b}/**', 'file:///x/c/c')).toBe(false);
    expect(matches('file:///x/{draft}', 'file:///x/%7Bdraft%7D')).toBe(true);
    expect(matches('tool:read_*', 'tool:read_resource')).toBe(true);
  });

  it("compares the scheme, and a special scheme's host, case-insensitively, without the default port; a literal end also matches a directory", () => {
    expect(matches('FILE:///x/y', 'file:///x/y/')).toBe(true);
    expect(matches('https://API.Example.com:443/x/**', 'https://api.example.com/x/y')).toBe(true);
    expect(matches('db://App/**', 'db://app/x')).toBe(false);
  });

  it('reports what in a pattern cannot match or is read literally', () => {
    expect(compileRulePattern('file:///x/%zz').problems).toEqual([
      expect.stringContaining("'%zz' is not a percent-escape"),
    ]);
    expect(compileRulePattern('file:///x/%FF').problems).toEqual([
      expect.stringContaining("'%FF' is not part of any UTF-8 character"),
    ]);
    expect(compileRulePattern('file:///x/[ab').problems).toEqual([
      expect.stringContaining('never closes'),
    ]);
    expect(compileRulePattern('file:///x/100%/**').problems).toEqual([]);
    expect(compileRulePattern('file:///x/café/**').problems).toEqual([]);
  });
});
