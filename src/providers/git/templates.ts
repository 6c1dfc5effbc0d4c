/**
 * The git provider's resource templates, all served by its read: first the partial reads, matched
 * before the plain file template (whose `{+path}` would also match `…?lines=…`) — a line range or
 * tail of a text file and a byte range of any file, at any ref, parsed by the shared parser
 * (utils/ranges.ts) and read part only (parts.ts) — then a file at a ref, the history of a path
 * or a ref, and one commit.
 */
import type { CallContext, Completer, ReadResult, ResourceTemplate } from '../../core/types.js';
import type { GitSource } from './context.js';
import { DEFAULT_LOG_LIMIT } from './options.js';

type Read = (uri: string, ctx: CallContext) => Promise<ReadResult>;

export function gitTemplates(
  source: GitSource,
  read: Read,
  complete: { ref: Completer; path: Completer; sha: Completer },
): ResourceTemplate[] {
  const { root, name, maxReadBytes, maxLogEntries } = source;
  const serve = (uri: string, _variables: unknown, ctx: CallContext): Promise<ReadResult> =>
    read(uri, ctx);
  const refAndPath = { ref: complete.ref, path: complete.path };
  return [
    ...partTemplates(root, name, maxReadBytes, read, refAndPath),
    {
      uriTemplate: `${root}{ref}/{+path}`,
      name: `${name}-file`,
      title: `File at a ref in ${name}`,
      description:
        `A file of the ${name} repository at a branch, tag or commit id (percent-encode a ref containing '/', e.g. feature%2Fx). ` +
        'Read byte for byte: UTF-8 text, or a base64 blob; one over the read cap by ?lines= or ?bytes=.',
      read: serve,
      complete: refAndPath,
    },
    {
      uriTemplate: `${root}log/{ref}/{+path}{?limit}`,
      name: `${name}-history`,
      title: `History of a path in ${name}`,
      description: `Commits reachable from the ref that touch the path (a file or directory), newest first, as JSON; limit defaults to ${DEFAULT_LOG_LIMIT}, at most ${maxLogEntries}.`,
      mimeType: 'application/json',
      read: serve,
      complete: refAndPath,
    },
    {
      uriTemplate: `${root}log/{ref}{?limit}`,
      name: `${name}-log`,
      title: `History of a ref in ${name}`,
      description: `Commits reachable from the ref, newest first, as JSON; limit defaults to ${DEFAULT_LOG_LIMIT}, at most ${maxLogEntries}.`,
      mimeType: 'application/json',
      read: serve,
      complete: { ref: complete.ref },
    },
    {
      uriTemplate: `${root}commits/{sha}`,
      name: `${name}-commit`,
      title: `Commit in ${name}`,
      description: `One commit as JSON: message, author, date, changed files and the diff against its first parent (omitted when over ${maxReadBytes} bytes).`,
      mimeType: 'application/json',
      read: serve,
      complete: { sha: complete.sha },
    },
  ];
}

function partTemplates(
  root: string,
  name: string,
  maxReadBytes: number,
  read: Read,
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
