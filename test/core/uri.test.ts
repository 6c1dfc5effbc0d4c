// Pins URI parsing: what is refused as an InvalidUriError (with a reason), and how accepted URIs are
// normalised before anything routes on them.
import { describe, expect, it } from 'vitest';
import { InvalidUriError } from '../../src/core/errors.js';
import { MAX_URI_LENGTH, parseUri } from '../../src/core/uri.js';

function reasonFor(raw: unknown): string {
  try {
    parseUri(raw);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidUriError);
    const e = error as InvalidUriError;
    expect(e.code).toBe('invalid_uri');
    expect(e.message).toBe(`Invalid resource URI: ${String(e.data['reason'])}`);
    return String(e.data['reason']);
  }
  throw new Error(`parseUri accepted ${JSON.stringify(raw)}`);
}

describe('parseUri', () => {
  it('refuses a URI that is not a string', () => {
    for (const raw of [undefined, null, 42, {}, ['file:///x']])
      expect(reasonFor(raw)).toBe('the URI must be a string');
  });

  it('refuses an empty URI', () => {
    expect(reasonFor('')).toBe('the URI is empty');
  });

  it('refuses relative URIs', () => {
    for (const raw of ['docs/a.txt', '/etc/passwd', './a', '../a', '//host/a', '1abc:x', ':x']) {
      expect(reasonFor(raw), raw).toMatch(/^the URI is relative/);
    }
  });

  it('refuses control characters, raw or in the C1 range, anywhere in the URI', () => {
    for (const raw of [
      'file:///a\0b',
      'file:///a\nb',
      'file:///a\tb',
      'file:///a\u007fb',
      'file:///a\u0085b',
      'file:///a\rb',
    ]) {
      expect(reasonFor(raw), JSON.stringify(raw)).toBe('the URI contains control characters');
    }
  });

  it('refuses a URI over 64 KiB before parsing it, and keeps only a truncated copy in the error', () => {
    const raw = `file:///${'a'.repeat(MAX_URI_LENGTH)}`;
    expect(reasonFor(raw)).toMatch(/over the limit of 65536/);
    try {
      parseUri(raw);
    } catch (error) {
      expect(String((error as InvalidUriError).data['uri']).length).toBeLessThan(1000);
    }
    expect(() => parseUri(`file:///${'a'.repeat(MAX_URI_LENGTH - 8)}`)).not.toThrow();
  });

  it('refuses a malformed absolute URI', () => {
    for (const raw of ['http://[::1', 'http://exa mple.com/', 'https://a:b:c@/x', 'http://%zz/']) {
      expect(reasonFor(raw), raw).toBe('the URI is malformed');
    }
  });

  it('normalises file:/x and file://localhost/x to file:///x', () => {
    expect(parseUri('file:/x').href).toBe('file:///x');
    expect(parseUri('file://localhost/x').href).toBe('file:///x');
    expect(parseUri('file:///x').href).toBe('file:///x');
  });

  it('lower-cases the scheme and resolves dot segments, keeping the raw form too', () => {
    const parsed = parseUri('FILE:///srv/docs/./a/../b.txt');
    expect(parsed).toEqual({
      raw: 'FILE:///srv/docs/./a/../b.txt',
      href: 'file:///srv/docs/b.txt',
    });
    expect(parseUri('file:///srv/%2e%2e/etc').href).toBe('file:///etc');
    expect(parseUri('file:///srv\\..\\etc').href).toBe('file:///etc');
  });

  it('accepts opaque URIs of other schemes unchanged', () => {
    expect(parseUri('mem:thing').href).toBe('mem:thing');
    expect(parseUri('postgres://db/table/1').href).toBe('postgres://db/table/1');
  });

  it('answers a URI parsed again with the same frozen result, and remembers only what parsed', () => {
    const first = parseUri('file:///srv/docs/again.txt');
    expect(parseUri('file:///srv/docs/again.txt')).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    // A refusal is refused again, not remembered as a success.
    expect(() => parseUri('file://[bad')).toThrow(InvalidUriError);
    expect(() => parseUri('file://[bad')).toThrow(InvalidUriError);
  });
});
