/**
 * The one form access rules and URIs are compared in, so that a rule matches what people type.
 * A URI reaches the rules percent-encoded (`file:///srv/caf%C3%A9/my%20docs/`, and a provider may
 * encode `+` or `[` where another does not); a rule is written as people read names
 * (`file:///srv/café/my docs/**`), perhaps in another Unicode normal form (`cafe\u0301`, as macOS
 * spells file names). Both are brought to the **match form**:
 *
 * - every percent-escape is decoded (hex in either case), except those of the four characters that
 *   would change what the URI says — `/` (a segment separator), `%`, `?` (a query) and `#` (a
 *   fragment) — which stay escaped, upper-case: `%2F` inside a name is a literal slash in that
 *   name and never matched by a `/` in a rule;
 * - bytes that are not UTF-8 stay escaped (no name a provider serves holds them);
 * - the text is put in Unicode NFC.
 *
 * In the match form every `%` begins a three-character escape, so the form is unambiguous.
 */

/** Characters whose escapes stay escaped in the match form. */
const KEPT_ESCAPED = new Set(['/', '%', '?', '#']);
const HEX_PAIR = /^[0-9A-Fa-f]{2}$/;
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The match form of a URI (as served, or as normalised by `parseUri`). */
export function matchForm(uri: string): string {
  if (!uri.includes('%')) return uri.normalize('NFC');
  return decodeEscapes(uri).text;
}

/** A stretch of rule text read literally, in the match form, and what in it can never match. */
export interface LiteralForm {
  text: string;
  /** Escapes that decode to bytes no UTF-8 name holds (e.g. `%FF`, or `%C3` alone). */
  invalid: string[];
}

/**
 * The match form of literal text from a rule (`\`-escapes already resolved by the caller): a `%`
 * followed by two hex digits is an escape; any other `%` is a percent sign in a name, as are a `#`
 * and a `?` the caller marks literal (they are escaped, as a provider escapes them in a name).
 */
export function literalForm(text: string): LiteralForm {
  let encoded = '';
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i]!;
    if (char === '%' && HEX_PAIR.test(text.slice(i + 1, i + 3))) encoded += char;
    else if (char === '%' || char === '#' || char === '?') encoded += escapeOf(char);
    else encoded += char;
  }
  return decodeEscapes(encoded);
}

/** Where a `%` in rule text does not begin an escape but is followed by what looks like one (`%zz`, `%4`). */
export function strayPercents(text: string): string[] {
  const found: string[] = [];
  for (let i = text.indexOf('%'); i >= 0; i = text.indexOf('%', i + 1)) {
    const next = text.slice(i + 1, i + 3);
    if (!HEX_PAIR.test(next) && /^[0-9A-Za-z]/.test(next)) found.push(`%${next}`);
  }
  return found;
}

function escapeOf(char: string): string {
  return `%${char.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;
}

/** Decodes runs of `%XX` escapes as UTF-8 (keeping the structural ones and non-UTF-8 bytes escaped), then NFC. */
function decodeEscapes(text: string): LiteralForm {
  const invalid: string[] = [];
  let out = '';
  let i = 0;
  while (i < text.length) {
    if (text[i] !== '%' || !HEX_PAIR.test(text.slice(i + 1, i + 3))) {
      out += text[i];
      i += 1;
      continue;
    }
    const bytes: number[] = [];
    while (text[i] === '%' && HEX_PAIR.test(text.slice(i + 1, i + 3))) {
      bytes.push(Number.parseInt(text.slice(i + 1, i + 3), 16));
      i += 3;
    }
    out += decodeBytes(bytes, invalid);
  }
  return { text: out.normalize('NFC'), invalid };
}

function decodeBytes(bytes: readonly number[], invalid: string[]): string {
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i]!;
    const length =
      lead < 0x80
        ? 1
        : lead >= 0xc2 && lead <= 0xdf
          ? 2
          : lead >= 0xe0 && lead <= 0xef
            ? 3
            : lead >= 0xf0 && lead <= 0xf4
              ? 4
              : 0;
    let char: string | undefined;
    if (length > 0 && i + length <= bytes.length) {
      try {
        char = UTF8.decode(Uint8Array.from(bytes.slice(i, i + length)));
      } catch {
        char = undefined;
      }
    }
    if (char === undefined) {
      const escape = escapeOf(String.fromCharCode(lead));
      invalid.push(escape);
      out += escape;
      i += 1;
      continue;
    }
    out += KEPT_ESCAPED.has(char) ? escapeOf(char) : char;
    i += length;
  }
  return out;
}
