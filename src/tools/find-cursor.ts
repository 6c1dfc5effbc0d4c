/**
 * The continuation cursor of `find_resources`: a position in the scan — the registry cursor of the
 * page it stopped in (sealed by the registry) and how far into that page it got, with the URI of
 * the last item consumed to re-align if the page shifted. It is not sealed itself (the registry
 * cursor inside is, and the offset is range-checked), and it carries no filters.
 */
import { InvalidCursorError } from '../core/errors.js';

/** Resources asked of the registry per page while scanning. */
export const SCAN_PAGE = 500;
const CURSOR_PREFIX = 'find1.';
const MAX_CURSOR_LENGTH = 16_384;

/** Where a search resumes: the registry page it stopped in, and how far into that page. */
export interface Position {
  page?: string;
  skip: number;
  /** The URI of the last item consumed from that page, to re-align if the page shifted. */
  lastUri?: string | undefined;
}

export function encodePosition(position: Position): string {
  const payload: unknown[] = [position.page ?? null, position.skip];
  if (position.lastUri !== undefined) payload.push(position.lastUri);
  return `${CURSOR_PREFIX}${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
}

/** Reads a find cursor; the registry cursor inside is checked (sealed) when the scan resumes. */
export function decodePosition(cursor: string): Position {
  if (!cursor.startsWith(CURSOR_PREFIX) || cursor.length > MAX_CURSOR_LENGTH) {
    throw new InvalidCursorError(
      'not a find_resources cursor (cursors from list_resources do not continue a search)',
    );
  }
  let payload: unknown;
  try {
    payload = JSON.parse(
      Buffer.from(cursor.slice(CURSOR_PREFIX.length), 'base64url').toString('utf8'),
    );
  } catch {
    throw new InvalidCursorError('unreadable cursor');
  }
  if (!Array.isArray(payload) || payload.length < 2 || payload.length > 3)
    throw new InvalidCursorError('unreadable cursor');
  const [page, skip, lastUri] = payload as unknown[];
  if (
    (page !== null && (typeof page !== 'string' || page === '')) ||
    !Number.isSafeInteger(skip) ||
    (skip as number) < 0 ||
    (skip as number) >= SCAN_PAGE
  ) {
    throw new InvalidCursorError('unreadable cursor');
  }
  if (lastUri !== undefined && typeof lastUri !== 'string')
    throw new InvalidCursorError('unreadable cursor');
  const position: Position = { skip: skip as number };
  if (page !== null) position.page = page as string;
  if (lastUri !== undefined) position.lastUri = lastUri as string;
  return position;
}
