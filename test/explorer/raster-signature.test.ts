// Which bytes the explorer will give a picture's type: only those whose own signature names a raster
// format, whatever type the resource claims — never SVG, HTML, XML or PDF, nor look-alike heads.
import { describe, expect, it } from 'vitest';
import { rasterTypeOf } from '../../src/ui/inert.js';

const bytes = (...parts: Array<string | number[]>): Uint8Array =>
  Uint8Array.from(
    parts.flatMap((part) => (typeof part === 'string' ? [...Buffer.from(part, 'latin1')] : part)),
  );
const padded = (head: Uint8Array, length = 64): Uint8Array =>
  Uint8Array.from([...head, ...new Array<number>(Math.max(0, length - head.length)).fill(0)]);

describe('rasterTypeOf', () => {
  it('names each raster format by its signature', () => {
    expect(rasterTypeOf(padded(bytes([0x89], 'PNG\r\n\x1a\n')))).toBe('image/png');
    expect(rasterTypeOf(padded(bytes([0xff, 0xd8, 0xff, 0xe0])))).toBe('image/jpeg');
    expect(rasterTypeOf(padded(bytes('GIF87a')))).toBe('image/gif');
    expect(rasterTypeOf(padded(bytes('GIF89a')))).toBe('image/gif');
    expect(rasterTypeOf(padded(bytes('RIFF', [1, 2, 3, 4], 'WEBPVP8 ')))).toBe('image/webp');
    expect(rasterTypeOf(padded(bytes([0, 0, 0, 0x1c], 'ftypavif')))).toBe('image/avif');
    expect(rasterTypeOf(padded(bytes([0, 0, 0, 0x1c], 'ftypavis')))).toBe('image/avif');
    expect(rasterTypeOf(padded(bytes('BM')))).toBe('image/bmp');
    expect(rasterTypeOf(padded(bytes([0, 0, 1, 0, 1, 0])))).toBe('image/x-icon');
  });

  it('names nothing for documents, whatever they start with', () => {
    for (const text of [
      '<svg xmlns="http://www.w3.org/2000/svg"><script>1</script></svg>',
      '<?xml version="1.0"?><svg/>',
      '<!doctype html><script>1</script>',
      '\ufeff<html>',
      '%PDF-1.4\n',
      '<?xml-stylesheet type="text/xsl" href="#s"?><r/>',
      '',
    ]) {
      expect(rasterTypeOf(new TextEncoder().encode(text)), text).toBeUndefined();
    }
  });

  it('names nothing for look-alike or cut-short heads', () => {
    expect(rasterTypeOf(bytes([0x89], 'PNG\r\n'))).toBeUndefined();
    expect(rasterTypeOf(bytes([0xff, 0xd8]))).toBeUndefined();
    expect(rasterTypeOf(padded(bytes('GIF88a')))).toBeUndefined();
    expect(rasterTypeOf(padded(bytes('RIFF', [1, 2, 3, 4], 'WAVEfmt ')))).toBeUndefined();
    expect(rasterTypeOf(padded(bytes([0, 0, 0, 0x1c], 'ftypheic')))).toBeUndefined();
    expect(rasterTypeOf(bytes('BM<svg/>'))).toBeUndefined();
    expect(rasterTypeOf(padded(bytes([0, 0, 1, 0, 0, 0])))).toBeUndefined();
  });
});
