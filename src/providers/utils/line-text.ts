/**
 * A line range as text, judged the same way for every source: `?lines=` is refused up front on a
 * file whose type says it is binary, and a slice that turns out not to be text (invalid UTF-8, or
 * NUL bytes in a file of unknown type — as a whole read would judge it) is refused too, both as
 * invalid arguments that say how to read the file instead.
 */
import { isUtf8 } from 'node:buffer';
import { InvalidArgumentError } from '../../core/errors.js';
import type { TextContents } from '../../core/types.js';
import { isTextualMime } from './content.js';

/** Refuses `?lines=` on a file whose declared type (from its name) is binary. */
export function refuseBinaryLines(uri: string, mimeType: string | undefined): void {
  if (mimeType !== undefined && !isTextualMime(mimeType))
    throw new InvalidArgumentError(
      'lines',
      `a binary file (${mimeType}) has no lines; read it whole or by ?bytes=START-END`,
      { uri },
    );
}

/** The sliced lines as text content for `uri` (`text/plain` when the name says no type). */
export function linesText(uri: string, mimeType: string | undefined, bytes: Buffer): TextContents {
  if (!isUtf8(bytes) || (mimeType === undefined && bytes.includes(0)))
    throw new InvalidArgumentError(
      'lines',
      'a binary file has no lines; read it whole or by ?bytes=START-END',
      { uri },
    );
  return { uri, mimeType: mimeType ?? 'text/plain', text: bytes.toString('utf8') };
}
