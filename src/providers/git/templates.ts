/**
 * The git provider's partial-read templates, matched before the plain file template (whose
 * `{+path}` would also match `…?lines=…`): a line range or tail of a text file and a byte range of
 * any file, at any ref. Both are served by the provider's read, which parses the query with the
 * shared parser (utils/ranges.ts) and reads only the part (parts.ts).
 */
import type { CallContext, Completer, ReadResult, ResourceTemplate } from '../../core/types.js';

export function partTemplates(
  root: string,
  name: string,
  maxReadBytes: number,
  read: (uri: string, ctx: CallContext) => Promise<ReadResult>,
  complete: { ref: Completer; path: Completer },
): ResourceTemplate[] {
  const serve = (uri: string, _variables: unknown, ctx: CallContext): Promise<ReadResult> =>
    read(uri, ctx);
  return [
    {
      uriTemplate: `${root}{ref}/{+path}{?lines}`,
      name: `${name}-file-lines`,
      title: `Lines of a file at a ref in ${name}`,
      description:
        `A line range of a text file of the ${name} repository at a branch, tag or commit id, of any size (the blob is streamed; only the range is kept). ` +
        '`lines=START-END` is 1-based and inclusive; `START-` runs to the end; `N` is line N alone; `-N` is the last N lines (e.g. -100). ' +
        `START past the last line reads as empty text; END past it is clamped; a range over ${maxReadBytes} bytes is too large.`,
      read: serve,
      complete,
    },
    {
      uriTemplate: `${root}{ref}/{+path}{?bytes}`,
      name: `${name}-file-bytes`,
      title: `Byte range of a file at a ref in ${name}`,
      description:
        `A byte range of any file of the ${name} repository at a branch, tag or commit id, of any size: for binaries over the read cap. ` +
        '`bytes=START-END` is 0-based and inclusive (as HTTP Range); `START-` runs to the end or the read cap. ' +
        `END past the end is clamped; START past the last byte is an invalid argument; a range over ${maxReadBytes} bytes is too large.`,
      read: serve,
      complete,
    },
  ];
}
