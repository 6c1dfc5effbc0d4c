/**
 * Dot segments in every spelling a store, a proxy or a server might fold into one. A key or a path
 * value is sent on only when none of its segments is `.` or `..` however often it is decoded:
 *
 *   - percent-escapes, case-insensitive, decoded again and again until nothing changes (so
 *     `%2e%2e`, `.%2E`, `..%2F` and the double-encoded `%252e%252e` all count as dots and slashes);
 *   - overlong UTF-8 forms of `.`, `/` and `\` (`%c0%ae`, `%e0%80%ae`, …), which JavaScript refuses
 *     to decode but some servers accept, and IIS-style `%u002e`;
 *   - compatibility forms a Unicode-normalising server folds into ASCII (NFKC): fullwidth `．`,
 *     `／` and `＼`, the one-dot leader `․` and the two-dot leader `‥`;
 *   - `\` as a separator beside `/` (Windows-backed stores and some proxies split on it).
 *
 * The check reads a decoded copy only: what is sent is the value as given, encoded as before. The
 * check is for refusing, never for rewriting.
 */

/** Escapes JavaScript's decoder refuses but lenient servers turn into `.`, `/` or `\`. */
const LOOSE_ESCAPES: Record<string, string> = {
  '%c0%ae': '.',
  '%e0%80%ae': '.',
  '%f0%80%80%ae': '.',
  '%c0%af': '/',
  '%e0%80%af': '/',
  '%f0%80%80%af': '/',
  '%c1%9c': '\\',
  '%e0%81%9c': '\\',
  '%f0%80%81%9c': '\\',
  '%u002e': '.',
  '%u002f': '/',
  '%u005c': '\\',
  '%uff0e': '.',
  '%uff0f': '/',
  '%uff3c': '\\',
};
const LOOSE =
  /%c0%a[ef]|%e0%80%a[ef]|%f0%80%80%a[ef]|%c1%9c|%e0%81%9c|%f0%80%81%9c|%u(?:002e|002f|005c|ff0e|ff0f|ff3c)/gi;
const ESCAPE_RUN = /(?:%[0-9a-f]{2})+/gi;
/** Most decoding rounds: each round removes one level of `%25`, so this is a bound, not a guess. */
const MAX_ROUNDS = 16;

/** `text` decoded as far as any lenient server would: repeatedly, leniently, then NFKC-folded. */
export function unescapeFully(text: string): string {
  let current = text;
  for (let round = 0; round < MAX_ROUNDS; round += 1) {
    const next = decodeOnce(current).normalize('NFKC');
    if (next === current) return next;
    current = next;
  }
  return current;
}

/** Whether any `/`- or `\`-separated segment of `text`, fully unescaped, is `.` or `..`. */
export function hasDotSegment(text: string): boolean {
  return unescapeFully(text)
    .split(/[/\\]/)
    .some((segment) => segment === '.' || segment === '..');
}

/** Whether `text`, fully unescaped, holds a path separator (`/` or `\`). */
export function hasSeparator(text: string): boolean {
  return /[/\\]/.test(unescapeFully(text));
}

function decodeOnce(text: string): string {
  if (!text.includes('%')) return text;
  const loose = text.replace(LOOSE, (escape) => LOOSE_ESCAPES[escape.toLowerCase()]!);
  return loose.replace(ESCAPE_RUN, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      // Not valid UTF-8 as a whole: decode the ASCII bytes (which is all a dot or a slash can be).
      return run.replace(/%([0-7][0-9a-f])/gi, (_escape, hex: string) =>
        String.fromCharCode(Number.parseInt(hex, 16)),
      );
    }
  });
}
