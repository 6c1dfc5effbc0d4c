/**
 * The files provider's resource templates, one pair per root:
 *
 *   - `file:///<root>/{+path}{?lines}` — a line range of a text file (for files over the
 *     read cap, or when only part is wanted). `lines=START-END` is 1-based and inclusive, `START-`
 *     runs to the end, a lone `N` is line N. Lines end after each `\n` (kept in the text, so
 *     consecutive ranges concatenate to the file); a last line without `\n` is a line. The slice is
 *     read in chunks, counting newlines until END — a multi-gigabyte file is never loaded — and is
 *     bounded by the same read cap as a whole read (over it: TooLargeError with the slice's size).
 *     START past the last line is empty text (a client cannot know the count in advance); END past
 *     it is clamped. Zero, END < START, a negative, non-numeric or oversized value, a directory and
 *     a binary file (no lines) are InvalidArgumentError.
 *   - `file:///<root>/{+path}` — any file or directory under the root, as a plain read.
 *
 * The registry matches a URI against a provider's templates in order and `{+path}` (reserved
 * expansion) also matches `…?lines=…`, so the line-range template comes first. Both hand the path
 * to the very code a plain read runs: percent-decoded, joined under the root, the real path of the
 * opened descriptor checked, exclusions applied. A query or fragment anywhere else is refused (see
 * `rejectQuery`), never silently dropped.
 */
import { isUtf8 } from 'node:buffer';
import { closeSync, read as readCallback, readSync } from 'node:fs';
import { basename } from 'node:path';
import { promisify } from 'node:util';
import { InvalidArgumentError, NotFoundError, TooLargeError } from '../../core/errors.js';
import type {
  CallContext,
  Completer,
  ResourceTemplate,
  TemplateVariables,
} from '../../core/types.js';
import type { OpenedEntry } from './containment.js';
import { isTextualMime, mimeFromName } from '../utils/content.js';

const readAsync = promisify(readCallback);

/** Slices are scanned in chunks of this size. */
const CHUNK = 1024 * 1024;
/** Files up to this size are scanned with one synchronous read. */
const SYNC_READ_LIMIT = 64 * 1024;
/** Longest `lines` value considered (15 digits a side is past any real line number). */
const MAX_LINES_VALUE = 64;
const NEWLINE = 0x0a;

/** A 1-based, inclusive line range; `end` undefined runs to the last line. */
export interface LineRange {
  start: number;
  end?: number;
}

export interface FileTemplateOptions {
  /** The root's canonical directory URI, with its trailing slash. */
  rootUri: string;
  /** Largest slice, in bytes (the provider's read cap). */
  maxReadBytes: number;
  /** The provider's containment-checked open of the entry a query-less URI names (NotFoundError otherwise). */
  open(uri: string, ctx?: CallContext): OpenedEntry & { path: string };
  /** Completes the `path` variable. */
  completePath: Completer;
}

/** The two templates of one root, in matching order. */
export function fileTemplates(options: FileTemplateOptions): ResourceTemplate[] {
  const { rootUri, maxReadBytes } = options;
  const complete = { path: options.completePath };
  return [
    {
      uriTemplate: `${rootUri}{+path}{?lines}`,
      name: 'file-lines',
      title: 'Lines of a file',
      description:
        `A line range of a text file under ${rootUri}, for files over the read cap or when only part is wanted. ` +
        '`lines=START-END` is 1-based and inclusive; `START-` runs to the end; `N` is line N alone. ' +
        'Each line keeps its newline. START past the last line reads as empty text; END past it is clamped. ' +
        `Zero, END before START, non-numeric values, directories and binary files are invalid arguments; a slice over ${maxReadBytes} bytes is too large.`,
      read: async (uri, variables, ctx) => {
        const path = single(variables, 'path');
        rejectQuery(uri, path);
        const range = parseLines(single(variables, 'lines'));
        let opened: OpenedEntry & { path: string };
        try {
          opened = options.open(rootUri + path, ctx);
        } catch (error) {
          // Missing, outside or excluded: reported under the URI the client sent.
          throw error instanceof NotFoundError ? new NotFoundError(uri) : error;
        }
        try {
          return { contents: [await readLines(uri, opened, range, maxReadBytes, ctx)] };
        } finally {
          closeSync(opened.fd);
        }
      },
      complete,
    },
    {
      uriTemplate: `${rootUri}{+path}`,
      name: 'file',
      title: 'File or directory',
      description:
        `Any file under ${rootUri} by its path relative to the root (complete \`path\` like a shell: directories end in '/'). ` +
        'A directory reads as a JSON listing of its children. Queries and fragments are refused; for a line range use ?lines=START-END.',
      // No read of its own: the registry then serves a match with the provider's read (the same
      // code), without matching this template on every read first.
      complete,
    },
  ];
}

/**
 * Refuses a file URI carrying a query or fragment: in a normalised `file:` href, `?` and `#` can only
 * be delimiters (inside a name they are percent-encoded). `part` is the portion to check (the whole
 * href by default). Checked before anything touches the disk, so it says nothing about existence.
 */
export function rejectQuery(uri: string, part: string = uri): void {
  if (!part.includes('?') && !part.includes('#')) return;
  throw new InvalidArgumentError(
    'uri',
    'a file URI takes no query or fragment other than a lone ?lines=START-END (e.g. ?lines=1-100)',
    {
      uri: uri.length > 512 ? `${uri.slice(0, 512)}…` : uri,
    },
  );
}

/** Parses a `lines` value: `START-END`, `START-` or `N`, 1-based; anything else is InvalidArgumentError. */
export function parseLines(raw: string): LineRange {
  const invalid = (reason: string): InvalidArgumentError =>
    new InvalidArgumentError('lines', reason, {
      value: raw.length > MAX_LINES_VALUE ? `${raw.slice(0, MAX_LINES_VALUE)}…` : raw,
    });
  if (raw.length > MAX_LINES_VALUE * 3)
    throw invalid('expected START-END, START- or N (e.g. 1-100)');
  let value: string;
  try {
    value = decodeURIComponent(raw);
  } catch {
    throw invalid('expected START-END, START- or N (e.g. 1-100)');
  }
  const match = /^(\d{1,15})(?:-(\d{0,15}))?$/.exec(value);
  if (match === null)
    throw invalid('expected START-END, START- or N with whole numbers from 1 (e.g. 1-100)');
  const start = Number(match[1]);
  const end = match[2] === undefined ? start : match[2] === '' ? undefined : Number(match[2]);
  if (start < 1 || (end !== undefined && end < 1)) throw invalid('lines are numbered from 1');
  if (end !== undefined && end < start) throw invalid(`END (${end}) is before START (${start})`);
  return end === undefined ? { start } : { start, end };
}

/** Reads lines `range` of the open file `opened` as one text content for `uri`. */
async function readLines(
  uri: string,
  opened: OpenedEntry & { path: string },
  range: LineRange,
  cap: number,
  ctx: CallContext,
): Promise<{ uri: string; mimeType: string; text: string }> {
  if (opened.stats.isDirectory())
    throw new InvalidArgumentError('lines', 'a directory has no lines; read it without ?lines', {
      uri,
    });
  const declared = mimeFromName(basename(opened.path));
  if (declared !== undefined && !isTextualMime(declared)) {
    throw new InvalidArgumentError(
      'lines',
      `a binary file (${declared}) has no lines; read it whole`,
      { uri },
    );
  }
  const bytes = await sliceLines(opened.fd, opened.stats.size, range, cap, uri, ctx);
  // Judged like a whole read: valid UTF-8, and for an unknown type no NUL bytes either.
  if (!isUtf8(bytes) || (declared === undefined && bytes.includes(0))) {
    throw new InvalidArgumentError('lines', 'a binary file has no lines; read it whole', { uri });
  }
  return { uri, mimeType: declared ?? 'text/plain', text: bytes.toString('utf8') };
}

/**
 * The bytes of lines `range` of the file open at `fd`, scanned chunk by chunk: only the slice is
 * kept, and only up to `cap` bytes of it. Over the cap, the slice's full size is still reported:
 * from the file size for an open range, by counting on to END (without keeping) otherwise.
 */
export async function sliceLines(
  fd: number,
  size: number,
  range: LineRange,
  cap: number,
  uri: string,
  ctx: CallContext,
): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(Math.max(1, Math.min(CHUNK, size)));
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let sliceBytes = 0;
  let line = 1; // the line the scan is in
  let start = range.start === 1 ? 0 : -1; // file offset where the slice begins, once found
  let end = -1; // file offset where it ends (exclusive), once found
  let pos = 0;
  while (pos < size && end < 0) {
    let n: number;
    const want = Math.min(buffer.length, size - pos);
    if (size <= SYNC_READ_LIMIT) {
      n = readSync(fd, buffer, 0, want, pos);
    } else {
      ctx.signal.throwIfAborted();
      n = (await readAsync(fd, buffer, 0, want, pos)).bytesRead;
    }
    if (n === 0) break; // the file shrank
    const chunk = buffer.subarray(0, n);
    let i = 0;
    while (start < 0) {
      const nl = chunk.indexOf(NEWLINE, i);
      if (nl < 0) {
        i = n;
        break;
      }
      i = nl + 1;
      line += 1;
      if (line === range.start) start = pos + i;
    }
    if (start >= 0) {
      if (range.end !== undefined) {
        while (i < n) {
          const nl = chunk.indexOf(NEWLINE, i);
          if (nl < 0) break;
          if (line === range.end) {
            end = pos + nl + 1;
            break;
          }
          line += 1;
          i = nl + 1;
        }
      }
      const from = Math.max(start, pos) - pos;
      const to = end >= 0 ? end - pos : n;
      sliceBytes += to - from;
      if (keptBytes + (to - from) > cap) {
        if (range.end === undefined) throw new TooLargeError(uri, size - start, cap);
        kept.length = 0;
        keptBytes = cap + 1; // keep counting, stop keeping
      } else if (keptBytes <= cap && to > from) {
        kept.push(Buffer.from(chunk.subarray(from, to)));
        keptBytes += to - from;
      }
    }
    pos += n;
  }
  if (sliceBytes > cap) throw new TooLargeError(uri, sliceBytes, cap);
  return kept.length === 1 ? kept[0]! : Buffer.concat(kept, keptBytes);
}

function single(variables: TemplateVariables, name: string): string {
  const value = variables[name];
  if (typeof value === 'string') return value;
  throw new InvalidArgumentError(name, 'expected exactly one value');
}
