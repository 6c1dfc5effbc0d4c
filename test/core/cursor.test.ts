// Pins the cursor codec: positions round-trip, and anything the codec did not mint for this list
// and binding — forged, edited, truncated, extended, over-long, sealed by another key — is an
// InvalidCursorError whose message tells the client to start again.
import { describe, expect, it } from 'vitest';
import { createCursorCodec, MAX_CURSOR_LENGTH, type CursorCodec } from '../../src/core/cursor.js';
import { InvalidCursorError } from '../../src/core/errors.js';

const SECRET = 'a test secret that is at least thirty-two bytes long';

function decodeError(
  codec: CursorCodec,
  cursor: string,
  list = 'resources',
  binding?: string,
): InvalidCursorError {
  try {
    codec.decode(cursor, list, binding);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidCursorError);
    const e = error as InvalidCursorError;
    expect(e.code).toBe('invalid_cursor');
    expect(e.message).toBe(
      `Invalid cursor: ${String(e.data['reason'])}. Start again without a cursor.`,
    );
    return e;
  }
  throw new Error(`decode accepted ${JSON.stringify(cursor.slice(0, 80))}`);
}

describe('cursor codec', () => {
  it('round-trips a position with and without a resume key, and with a binding', () => {
    const codec = createCursorCodec();
    for (const position of [
      { list: 'resources', mount: 'file:///srv/docs/' },
      { list: 'resources', mount: 'file:///srv/docs/', after: 'a/b c/ünïcödé.md' },
      { list: 'templates', mount: 'mem://x/', after: '12' },
    ]) {
      expect(codec.decode(codec.encode(position), position.list)).toEqual(position);
      expect(codec.decode(codec.encode(position, 'alice'), position.list, 'alice')).toEqual(
        position,
      );
    }
  });

  it('mints opaque URL-safe strings', () => {
    const cursor = createCursorCodec().encode({
      list: 'resources',
      mount: 'file:///srv/',
      after: 'x/y',
    });
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });

  it('refuses a forged cursor', () => {
    const codec = createCursorCodec();
    for (const forged of [
      'abc.def',
      'WzEsInJlc291cmNlcyIsIng6LyJd.AAAAAAAAAAAAAAAAAAAAAA',
      'nodot',
      '.startswithdot',
      'x.',
    ]) {
      expect(decodeError(codec, forged).data['reason']).toMatch(/not a cursor this server issued/);
    }
  });

  it('refuses an empty cursor', () => {
    expect(decodeError(createCursorCodec(), '').data['reason']).toBe('empty cursor');
  });

  it('refuses a cursor whose payload was edited, even with the original seal', () => {
    const codec = createCursorCodec();
    const cursor = codec.encode({ list: 'resources', mount: 'file:///srv/', after: 'a' });
    const [body, mac] = cursor.split('.') as [string, string];
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as unknown[];
    payload[3] = '../../etc/passwd';
    const edited = `${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${mac}`;
    expect(decodeError(codec, edited).data['reason']).toMatch(/altered/);
    const flipped = `${body.slice(0, 5)}${body[5] === 'A' ? 'B' : 'A'}${body.slice(6)}.${mac}`;
    decodeError(codec, flipped);
  });

  it('refuses a cursor whose seal was edited', () => {
    const codec = createCursorCodec();
    const cursor = codec.encode({ list: 'resources', mount: 'file:///srv/' });
    const dot = cursor.indexOf('.');
    const first = cursor[dot + 1]!;
    decodeError(
      codec,
      `${cursor.slice(0, dot + 1)}${first === 'A' ? 'B' : 'A'}${cursor.slice(dot + 2)}`,
    );
  });

  it('refuses a truncated cursor', () => {
    const codec = createCursorCodec();
    const cursor = codec.encode({ list: 'resources', mount: 'file:///srv/', after: 'some/key' });
    for (const cut of [
      1,
      2,
      10,
      cursor.length - cursor.indexOf('.'),
      Math.floor(cursor.length / 2),
    ]) {
      decodeError(codec, cursor.slice(0, cursor.length - cut));
    }
  });

  it('accepts only the exact string it minted, not one with characters appended to the seal', () => {
    const codec = createCursorCodec();
    const cursor = codec.encode({ list: 'resources', mount: 'file:///srv/', after: 'k' });
    for (const extended of [`${cursor}!`, `${cursor}=`, `${cursor}.`, `${cursor} `])
      decodeError(codec, extended);
  });

  it('refuses a cursor minted for another list', () => {
    const codec = createCursorCodec();
    const cursor = codec.encode({ list: 'templates', mount: 'mem://x/' });
    expect(decodeError(codec, cursor, 'resources').data['reason']).toBe(
      'cursor belongs to another list (templates)',
    );
  });

  it('refuses a cursor minted under another binding, or with none when one is expected', () => {
    const codec = createCursorCodec();
    const forAlice = codec.encode({ list: 'resources', mount: 'mem://x/' }, 'alice');
    decodeError(codec, forAlice, 'resources', 'bob');
    decodeError(codec, forAlice, 'resources');
    decodeError(
      codec,
      codec.encode({ list: 'resources', mount: 'mem://x/' }),
      'resources',
      'alice',
    );
  });

  it('refuses an over-long cursor before doing any work', () => {
    const codec = createCursorCodec();
    const long = `${'A'.repeat(MAX_CURSOR_LENGTH)}.B`;
    expect(decodeError(codec, long).data['reason']).toBe('cursor is too long');
  });

  it('refuses a cursor sealed by another process’s key, and accepts one sealed by a shared secret', () => {
    const position = { list: 'resources', mount: 'file:///srv/', after: 'a' };
    const cursor = createCursorCodec().encode(position);
    expect(decodeError(createCursorCodec(), cursor).data['reason']).toMatch(/server restarted/);
    const shared = createCursorCodec(SECRET).encode(position);
    expect(createCursorCodec(SECRET).decode(shared, 'resources')).toEqual(position);
    decodeError(createCursorCodec(`${SECRET}!`), shared);
  });

  it('refuses a secret shorter than 32 bytes', () => {
    expect(() => createCursorCodec('short')).toThrow(RangeError);
    expect(() => createCursorCodec(new Uint8Array(31))).toThrow(RangeError);
    expect(() => createCursorCodec(new Uint8Array(32))).not.toThrow();
  });
});
