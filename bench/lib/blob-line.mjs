/**
 * Reads a `resources/read` answer that carries one blob without `JSON.parse` of the whole line, the
 * way a client that expects large blobs can: the line's bytes (as they came off the pipe, in
 * pieces) are searched for the first `"blob":"`, and the base64 up to the next `"` is decoded
 * straight from those pieces into one Buffer, a few KiB at a time. Everything else — the line with
 * that field emptied — is `JSON.parse`d and must be a JSON-RPC result of exactly one content whose
 * `blob` is `""` and whose `uri` is a string, and every character of the field must count (its
 * decoded length is exactly 3/4 of its length less its `=` padding: a character outside base64 is
 * skipped by the decoder, so it shortens the result and is caught). When any of that does not hold,
 * undefined: the caller parses the whole line the ordinary way.
 */

const MARKER = Buffer.from('"blob":"', 'latin1');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const EQUALS = 0x3d;
/** Where the field is looked for: a result's head (uri, mimeType) is far shorter. */
const HEAD_MAX = 64 * 1024;

/**
 * `{ message, blob }` for the line held in `pieces` (`length` bytes, no newline): `message` is the
 * parsed answer with `result.contents[0].blob` emptied, `blob` the field decoded; or undefined.
 */
export function decodeBlobLine(pieces, length) {
  const head = pieces[0].length >= HEAD_MAX ? pieces[0] : concatHead(pieces);
  const marker = head.subarray(0, HEAD_MAX).indexOf(MARKER);
  if (marker <= 0 || head[marker - 1] === BACKSLASH) return undefined;
  const start = marker + MARKER.length;
  const end = indexFrom(pieces, QUOTE, start);
  if (end < 0) return undefined;
  const chars = end - start;
  if (chars % 4 !== 0) return undefined;
  const padding =
    chars === 0 ? 0 : (byteAt(pieces, end - 1) === EQUALS) + (byteAt(pieces, end - 2) === EQUALS);
  let message;
  try {
    message = JSON.parse(
      slice(pieces, 0, start).toString('utf8') + slice(pieces, end, length).toString('utf8'),
    );
  } catch {
    return undefined;
  }
  const contents = message?.result?.contents;
  if (
    message.jsonrpc !== '2.0' ||
    !Array.isArray(contents) ||
    contents.length !== 1 ||
    contents[0]?.blob !== '' ||
    typeof contents[0].uri !== 'string'
  )
    return undefined;
  const blob = Buffer.allocUnsafe((chars / 4) * 3 - padding);
  let written = 0;
  let carry = '';
  let at = 0;
  for (const piece of pieces) {
    const from = Math.max(start - at, 0);
    const to = Math.min(end - at, piece.length);
    at += piece.length;
    if (to <= from) continue;
    const text = carry + piece.latin1Slice(from, to);
    const whole = text.length - (text.length % 4);
    carry = text.slice(whole);
    written += blob.write(whole === text.length ? text : text.slice(0, whole), written, 'base64');
  }
  if (carry !== '' || written !== blob.length) return undefined;
  return { message, blob };
}

function concatHead(pieces) {
  const taken = [];
  let bytes = 0;
  for (const piece of pieces) {
    if (bytes >= HEAD_MAX) break;
    taken.push(piece);
    bytes += piece.length;
  }
  return Buffer.concat(taken, bytes);
}

/** The first `byte` at or after the line offset `from`, as a line offset; -1 when none. */
function indexFrom(pieces, byte, from) {
  let at = 0;
  for (const piece of pieces) {
    if (from < at + piece.length) {
      const found = piece.indexOf(byte, Math.max(from - at, 0));
      if (found >= 0) return at + found;
    }
    at += piece.length;
  }
  return -1;
}

function byteAt(pieces, offset) {
  let at = 0;
  for (const piece of pieces) {
    if (offset < at + piece.length) return piece[offset - at];
    at += piece.length;
  }
  return undefined;
}

/** Bytes [from, to) of the line as one Buffer (used for the short head and tail only). */
function slice(pieces, from, to) {
  const taken = [];
  let at = 0;
  for (const piece of pieces) {
    const a = Math.max(from - at, 0);
    const b = Math.min(to - at, piece.length);
    at += piece.length;
    if (b > a) taken.push(piece.subarray(a, b));
  }
  return taken.length === 1 ? taken[0] : Buffer.concat(taken);
}
