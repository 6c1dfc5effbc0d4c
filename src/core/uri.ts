/**
 * Parses and normalises every client-supplied URI before anything routes on it. A URI that is not
 * an absolute, well-formed URI is an InvalidUriError; a well-formed one that names nothing we serve
 * is a NotFoundError later, in the registry or the provider.
 */
import { InvalidUriError } from './errors.js';
import { rememberRecent } from './memo.js';

/** Longest URI accepted (64 KiB). Longer ones are refused before parsing. */
export const MAX_URI_LENGTH = 65_536;

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
// C0 controls, DEL and the C1 range are never valid in a URI, encoded or not they must be %-escaped.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

export interface ParsedUri {
  /** The URI as the client sent it. */
  readonly raw: string;
  /** The WHATWG-normalised form; routing and providers use this. */
  readonly href: string;
}

/** Parses `raw`, or throws InvalidUriError. Results are frozen and shared (recent ones are remembered). */
export function parseUri(raw: unknown): ParsedUri {
  if (typeof raw !== 'string') throw new InvalidUriError(String(raw), 'the URI must be a string');
  return parseString(raw);
}

const parseString = rememberRecent((raw: string): ParsedUri => {
  if (raw.length === 0) throw new InvalidUriError(raw, 'the URI is empty');
  if (raw.length > MAX_URI_LENGTH) {
    throw new InvalidUriError(
      raw,
      `the URI is ${raw.length} characters long, over the limit of ${MAX_URI_LENGTH}`,
    );
  }
  if (CONTROL.test(raw)) throw new InvalidUriError(raw, 'the URI contains control characters');
  if (!SCHEME.test(raw)) {
    throw new InvalidUriError(
      raw,
      'the URI is relative; expected an absolute URI such as file:///path/to/file',
    );
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new InvalidUriError(raw, 'the URI is malformed');
  }
  return Object.freeze({ raw, href: normalisePercentEncoding(url.href) });
});

/**
 * RFC 3986 §6.2.2.2: percent-encoded unreserved characters are decoded (`%7E` → `~`, `%73` → `s`)
 * and the remaining escapes upper-cased, so that one resource has one spelling. Routing, access
 * rules and providers all see this form: `file:///srv/%73ecrets/x` cannot slip past a rule written
 * for `file:///srv/secrets/**`.
 */
export function normalisePercentEncoding(href: string): string {
  if (!href.includes('%')) return href;
  return href.replace(/%([0-9A-Fa-f]{2})/g, (_match, hex: string) => {
    const code = Number.parseInt(hex, 16);
    const char = String.fromCharCode(code);
    return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
  });
}

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
