// What of the index a restricted caller's search may look at, from the rules that apply to it: URI
// ranges holding every document it may read (the registry still judges each one), whole-subtree
// denies cut out, and "everything" only when no rule restricts it anywhere in the indexed sources.
import { describe, expect, it } from 'vitest';
import { scopeOf } from '../../src/search/scope.js';

const roots = ['file:///srv/docs/', 'git://repo/'];

describe('scopeOf', () => {
  it('sees everything without rules in force', () => {
    expect(scopeOf(undefined, roots)).toEqual({ kind: 'all' });
  });

  it('sees everything when whole-subtree allows cover every indexed source and nothing is denied', () => {
    expect(
      scopeOf({ default: 'deny', rules: [{ allow: ['file:///**', 'git://**'] }] }, roots),
    ).toEqual({ kind: 'all' });
    expect(scopeOf({ default: 'allow', rules: [] }, roots)).toEqual({ kind: 'all' });
  });

  it('narrows to the literal beginnings of allow patterns, a pattern inside a directory included', () => {
    expect(
      scopeOf(
        {
          default: 'deny',
          rules: [
            {
              allow: [
                'file:///srv/docs/guides/**',
                'file:///srv/docs/*.md',
                'git://repo/file/main/READ?E',
              ],
            },
          ],
        },
        roots,
      ),
    ).toEqual({
      kind: 'ranges',
      allow: ['file:///srv/docs/', 'git://repo/file/main/READ'],
      deny: [],
    });
  });

  it('cuts out whole-subtree denies and leaves other denies to the per-document judgement', () => {
    const scope = scopeOf(
      {
        default: 'deny',
        rules: [
          {
            allow: ['file:///srv/**'],
            deny: ['file:///srv/docs/secret/**', '**/*.key', 'file:///srv/docs/a*/**'],
          },
        ],
      },
      roots,
    );
    expect(scope).toEqual({
      kind: 'ranges',
      allow: ['file:///srv/'],
      deny: ['file:///srv/docs/secret/'],
    });
  });

  it('treats a default of allow with any deny as everything but the denied subtrees', () => {
    expect(scopeOf({ default: 'allow', rules: [{ deny: ['git://repo/**'] }] }, roots)).toEqual({
      kind: 'ranges',
      allow: [''],
      deny: ['git://repo/'],
    });
  });

  it('ignores rules that do not cover reads, and sees nothing when no allow applies', () => {
    expect(
      scopeOf({ default: 'deny', rules: [{ operations: ['list'], allow: ['file:///**'] }] }, roots),
    ).toEqual({ kind: 'ranges', allow: [], deny: [] });
  });

  it('holds both spellings of a prefix the registry normalises', () => {
    const scope = scopeOf(
      { default: 'deny', rules: [{ allow: ['FILE:///srv/docs/me/**'] }] },
      roots,
    );
    expect(scope).toEqual({
      kind: 'ranges',
      allow: ['FILE:///srv/docs/me/', 'file:///srv/docs/me/'],
      deny: [],
    });
  });

  it('cuts an allow back to the last / before a character providers spell differently, and lets such a deny not narrow', () => {
    for (const name of ['%7Eme', 'café', 'cafe\u0301', 'caf%C3%A9', 'my docs', 'a#b', '100%']) {
      const scope = scopeOf(
        { default: 'deny', rules: [{ allow: [`file:///srv/docs/${name}/**`] }] },
        roots,
      );
      expect(scope, name).toEqual({ kind: 'ranges', allow: ['file:///srv/docs/'], deny: [] });
      const denied = scopeOf(
        { default: 'allow', rules: [{ deny: [`file:///srv/docs/${name}/**`] }] },
        roots,
      );
      expect(denied, name).toEqual({ kind: 'ranges', allow: [''], deny: [] });
    }
  });
});
