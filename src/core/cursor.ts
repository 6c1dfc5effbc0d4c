/**
 * Opaque, authenticated cursors. A cursor names a position in a merged list — which list, which
 * mount, and the provider key to resume after — sealed with an HMAC so a client can neither forge
 * nor edit one. The payload is not secret (it is signed, not encrypted), so it never holds content.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { InvalidCursorError } from './errors.js';
import type { Principal } from './principal.js';

/** Longest cursor string accepted; anything longer is refused before any work is done. */
export const MAX_CURSOR_LENGTH = 8192;
const MAC_BYTES = 16;
const VERSION = 1;

export interface CursorPosition {
  /** Which list the cursor pages through, e.g. `resources` or `templates`. */
  list: string;
  /** The mount (its URI root) the next page starts in. */
  mount: string;
  /** The provider key to resume strictly after, or undefined to start at the mount's beginning. */
  after?: string;
}

export interface CursorCodec {
  encode(position: CursorPosition, binding?: string): string;
  /** Throws InvalidCursorError for anything this codec did not mint for `list` and `binding`. */
  decode(cursor: string, list: string, binding?: string): CursorPosition;
}

/**
 * Creates a codec. Pass a stable `secret` (≥ 32 bytes) when several processes must accept each
 * other's cursors; the default is a random per-process key, so cursors die with the process.
 */
export function createCursorCodec(secret?: string | Uint8Array): CursorCodec {
  const key = secret === undefined ? randomBytes(32) : Buffer.from(secret);
  if (key.length < 32) throw new RangeError('cursor secret must be at least 32 bytes');

  const mac = (body: string, binding: string): Buffer =>
    createHmac('sha256', key)
      .update(binding)
      .update('\0')
      .update(body)
      .digest()
      .subarray(0, MAC_BYTES);

  return {
    encode(position, binding = '') {
      const payload: unknown[] = [VERSION, position.list, position.mount];
      if (position.after !== undefined) payload.push(position.after);
      const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
      return `${body}.${mac(body, binding).toString('base64url')}`;
    },

    decode(cursor, list, binding = '') {
      if (typeof cursor !== 'string' || cursor.length === 0)
        throw new InvalidCursorError('empty cursor');
      if (cursor.length > MAX_CURSOR_LENGTH) throw new InvalidCursorError('cursor is too long');
      const dot = cursor.indexOf('.');
      if (dot <= 0) throw new InvalidCursorError('not a cursor this server issued');
      const body = cursor.slice(0, dot);
      const given = Buffer.from(cursor.slice(dot + 1));
      const expected = Buffer.from(mac(body, binding).toString('base64url'));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw new InvalidCursorError(
          'not a cursor this server issued, or it was altered, or the server restarted',
        );
      }
      let payload: unknown;
      try {
        payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
      } catch {
        throw new InvalidCursorError('unreadable cursor');
      }
      if (!Array.isArray(payload) || payload[0] !== VERSION)
        throw new InvalidCursorError('unsupported cursor version');
      const [, listName, mount, after] = payload as [number, unknown, unknown, unknown];
      if (listName !== list)
        throw new InvalidCursorError(`cursor belongs to another list (${String(listName)})`);
      if (typeof mount !== 'string' || (after !== undefined && typeof after !== 'string')) {
        throw new InvalidCursorError('unreadable cursor');
      }
      return after === undefined ? { list, mount } : { list, mount, after };
    },
  };
}

/** What a cursor is bound to: the principal's kind and id (a token and an OAuth subject may share an id). */
export function cursorBinding(principal: Principal | undefined): string | undefined {
  return principal === undefined ? undefined : `${principal.kind}:${principal.id}`;
}

/**
 * The position a cursor sealed for `list` within `scope` (a directory, or '' for a list with one
 * scope) holds; InvalidCursorError for a forged one, another list's, scope's or principal's.
 */
export function openScoped(
  codec: CursorCodec,
  cursor: string,
  list: string,
  scope: string,
  binding: string | undefined,
): string | undefined {
  const position = codec.decode(cursor, list, binding);
  if (position.mount !== scope) throw new InvalidCursorError('this cursor belongs to another list');
  return position.after;
}
