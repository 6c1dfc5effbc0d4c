/**
 * The files provider's resource templates, three per root, in matching order:
 *
 *   - `file:///<root>/{+path}{?lines}` — a line range of a text file: `lines=START-END` (1-based,
 *     inclusive), `START-` to the end, a lone `N`, or `-N` for the last N lines;
 *   - `file:///<root>/{+path}{?bytes}` — a byte range of any file: `bytes=START-END` (0-based,
 *     inclusive) or `START-` (to the end or the read cap);
 *   - `file:///<root>/{+path}` — any file or directory under the root, as a plain read.
 *
 * Every one of them is served by the provider's own read, which parses the query with the shared
 * parser (utils/ranges.ts) and reads only the part (parts.ts); the templates describe the forms and
 * complete `path`. The registry matches templates in order and `{+path}` (reserved expansion) also
 * matches `…?lines=…`, so the range templates come first.
 */
import type { CallContext, Completer, ReadResult, ResourceTemplate } from '../../core/types.js';

export interface FileTemplateOptions {
  /** The root's canonical directory URI, with its trailing slash. */
  rootUri: string;
  /** Largest part, in bytes (the provider's read cap). */
  maxReadBytes: number;
  /** The provider's read, which serves every form. */
  read(uri: string, ctx: CallContext): Promise<ReadResult>;
  /** Completes the `path` variable. */
  completePath: Completer;
}

/** The three templates of one root, in matching order. */
export function fileTemplates(options: FileTemplateOptions): ResourceTemplate[] {
  const { rootUri, maxReadBytes } = options;
  const complete = { path: options.completePath };
  const read = (uri: string, _variables: unknown, ctx: CallContext): Promise<ReadResult> =>
    options.read(uri, ctx);
  return [
    {
      uriTemplate: `${rootUri}{+path}{?lines}`,
      name: 'file-lines',
      title: 'Lines of a file',
      description:
        `A line range of a text file under ${rootUri}, of any size (only the range is read), or when only part is wanted. ` +
        '`lines=START-END` is 1-based and inclusive; `START-` runs to the end; `N` is line N alone; `-N` is the last N lines (e.g. -100). ' +
        'Each line keeps its newline. START past the last line reads as empty text; END past it is clamped. ' +
        `Zero, END before START, non-numeric values, directories and binary files are invalid arguments; a range over ${maxReadBytes} bytes is too large.`,
      read,
      complete,
    },
    {
      uriTemplate: `${rootUri}{+path}{?bytes}`,
      name: 'file-bytes',
      title: 'Byte range of a file',
      description:
        `A byte range of any file under ${rootUri}, of any size (only the range is read): for binaries over the read cap. ` +
        '`bytes=START-END` is 0-based and inclusive (as HTTP Range); `START-` runs to the end or the read cap. ' +
        'END past the end is clamped; START past the last byte, END before START, negative or non-numeric values are invalid arguments; ' +
        `a range over ${maxReadBytes} bytes is too large. A range is text when it is valid UTF-8 of a textual type, otherwise a base64 blob.`,
      read,
      complete,
    },
    {
      uriTemplate: `${rootUri}{+path}`,
      name: 'file',
      title: 'File or directory',
      description:
        `Any file under ${rootUri} by its path relative to the root (complete \`path\` like a shell: directories end in '/'). ` +
        'A directory reads as a JSON listing of its children. For a part use ?lines=START-END or ?bytes=START-END; other queries and fragments are refused.',
      // No read of its own: the registry then serves a match with the provider's read (the same
      // code), without matching this template on every read first.
      complete,
    },
  ];
}
