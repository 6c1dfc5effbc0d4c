// What of a read the index takes as a resource's text (src/search/document.ts indexableText): the
// first text content, when its UTF-8 bytes — not its length in UTF-16 code units — are within the
// cap; a text the cap cannot hold is left out whole, never cut.
import { describe, expect, it } from 'vitest';
import { indexableText } from '../../src/search/document.js';

const text = (value: string) => [{ uri: 'mem://t/a.txt', mimeType: 'text/plain', text: value }];

describe('indexableText', () => {
  it('takes a text whose bytes are within the cap, to the last byte', () => {
    expect(indexableText(text('a'.repeat(12)), 12)).toBe('a'.repeat(12));
    expect(indexableText(text('é'.repeat(6)), 12)).toBe('é'.repeat(6));
    expect(indexableText(text('资'.repeat(4)), 12)).toBe('资'.repeat(4));
  });

  it('leaves out a text shorter than the cap in characters but longer in UTF-8 bytes', () => {
    expect(indexableText(text('é'.repeat(7)), 12)).toBe('');
    expect(indexableText(text('资'.repeat(5)), 12)).toBe('');
    // Four bytes each, two UTF-16 code units each.
    expect(indexableText(text('😀'.repeat(4)), 15)).toBe('');
    expect(indexableText(text('😀'.repeat(3)), 12)).toBe('😀'.repeat(3));
  });

  it('leaves out a text longer than the cap, and takes nothing but text', () => {
    expect(indexableText(text('a'.repeat(13)), 12)).toBe('');
    expect(indexableText([{ uri: 'mem://t/b', mimeType: 'image/png', blob: 'AAAA' }], 12)).toBe('');
    expect(indexableText([], 12)).toBe('');
  });
});
