// The URIs a list page gives its files (providers/files/served.ts FileUris): built from the
// directory's URI and the name when the name needs no encoding, they are exactly what
// `pathToFileURL` gives for every name — plain, encoded, non-ASCII — in any directory, the root too.
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FileUris } from '../../src/providers/files/served.js';

const NAMES = [
  'plain.txt',
  'f00001.txt',
  'UPPER_lower-1.2.3',
  '...',
  '-leading',
  'with space.md',
  '100%.txt',
  'hash#tag',
  'what?.txt',
  'back\\slash',
  'tab\tname',
  'new\nline',
  'tilde~',
  'brackets[1]',
  'caret^pipe|',
  'quote\'and"',
  'émigré.txt',
  '日本語.md',
  '😀.png',
  'semi;colon=eq&amp',
];

describe('FileUris', () => {
  it('gives each file the URI pathToFileURL gives, in one directory after another', () => {
    const uris = new FileUris();
    for (const dir of ['/srv/docs', '/srv/a b/ü', '/srv/docs/sub', '/srv/docs', '/'])
      for (const name of NAMES) {
        const abs = dir === '/' ? `/${name}` : `${dir}/${name}`;
        expect(uris.of(abs, name)).toBe(pathToFileURL(abs).href);
      }
  });

  it('gives every printable ASCII character in a name its pathToFileURL spelling', () => {
    const uris = new FileUris();
    for (let code = 0x20; code < 0x7f; code += 1) {
      const char = String.fromCharCode(code);
      if (char === '/') continue;
      const name = `a${char}b`;
      expect(uris.of(`/r/${name}`, name)).toBe(pathToFileURL(`/r/${name}`).href);
    }
  });
});
