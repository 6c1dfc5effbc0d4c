/**
 * How `reservoir search` prints one hit. The snippet is plain text with the match's ranges beside
 * it (`highlights`), so no marker in the text is mistaken for a match. On a terminal the matches
 * are drawn bold and underlined; elsewhere (a pipe, a file, or NO_COLOR set) the snippet is printed
 * as it is and the matched words follow on their own line, quoted as JSON strings. Control
 * characters from the text are shown as U+FFFD either way: a file cannot drive the terminal.
 */
import type { SearchHit } from '../search/service.js';

const EMPHASIS_ON = '\x1b[1;4m';
const EMPHASIS_OFF = '\x1b[22;24m';

/** `uri<TAB>score`, then the indented snippet (and, off a terminal, the matched words). */
export function formatHit(hit: SearchHit, terminal: boolean): string {
  const head = `${hit.uri}\t${hit.score}`;
  if (hit.snippet === '') return head;
  const text = inert(hit.snippet);
  if (terminal) return `${head}\n    ${emphasised(text, hit.highlights)}`;
  const words = hit.highlights.map(([start, end]) => JSON.stringify(text.slice(start, end)));
  return `${head}\n    ${text}${words.length === 0 ? '' : `\n    match: ${words.join(', ')}`}`;
}

/** Whether stdout is a terminal that takes ANSI emphasis (https://no-color.org turns it off). */
export function emphasisWanted(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return stream.isTTY === true && (env.NO_COLOR ?? '') === '' && env.TERM !== 'dumb';
}

function emphasised(text: string, highlights: readonly [number, number][]): string {
  let out = '';
  let at = 0;
  for (const [start, end] of highlights) {
    if (start < at || end <= start || end > text.length) continue;
    out += `${text.slice(at, start)}${EMPHASIS_ON}${text.slice(start, end)}${EMPHASIS_OFF}`;
    at = end;
  }
  return out + text.slice(at);
}

/** C0, DEL and C1 controls (\p{Cc}) replaced one for one (the ranges' offsets stay right). */
function inert(text: string): string {
  return text.replace(/\p{Cc}/gu, '\uFFFD');
}
