/**
 * The document layer's query parameters on a resource URI: `as=markdown|bytes`, `pages=START-END`
 * (PDF), `sheet=NAME` and `range=A1:D20` (spreadsheets), `slides=START-END` (presentations). They
 * are split off the URI before its source reads it; every other parameter stays. A parameter a
 * source's own templates name (an HTTP API's `range`, say) is the source's and is left alone.
 */
import { InvalidArgumentError } from '../core/errors.js';
import type { DocumentParts, NumberRange } from './types.js';
import { definedProps } from '../core/defined.js';

export const DOCUMENT_PARAMETERS = ['as', 'pages', 'sheet', 'range', 'slides'] as const;
type Parameter = (typeof DOCUMENT_PARAMETERS)[number];

export interface DocumentQuery {
  /** The URI without the document parameters. */
  source: string;
  /** `markdown`: the rendition alone; `bytes`: the original alone; undefined: both (see reads.ts). */
  as?: 'markdown' | 'bytes';
  parts: DocumentParts;
  /** Whether any document parameter was given. */
  given: boolean;
}

/** Longest value considered (a sheet name is at most 31 characters; ranges are short). */
const MAX_VALUE = 256;

export function splitDocumentQuery(href: string, claimed: ReadonlySet<string>): DocumentQuery {
  const hash = href.indexOf('#');
  const question = href.indexOf('?');
  if (question < 0 || (hash >= 0 && hash < question))
    return { source: href, parts: {}, given: false };
  const end = hash < 0 ? href.length : hash;
  const kept: string[] = [];
  const seen = new Map<Parameter, string>();
  for (const pair of href.slice(question + 1, end).split('&')) {
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    if (!(DOCUMENT_PARAMETERS as readonly string[]).includes(name) || claimed.has(name)) {
      kept.push(pair);
      continue;
    }
    const parameter = name as Parameter;
    if (seen.has(parameter))
      throw new InvalidArgumentError(parameter, `${parameter} is given twice`, { uri: clip(href) });
    seen.set(parameter, decode(parameter, eq < 0 ? '' : pair.slice(eq + 1), href));
  }
  // Nothing of ours: the URI goes to the source exactly as it came (a stray `?` included).
  if (seen.size === 0) return { source: href, parts: {}, given: false };
  const query = kept.join('&');
  const source = href.slice(0, question) + (query === '' ? '' : `?${query}`) + href.slice(end);
  const parts: DocumentParts = {};
  const asked = seen.get('as');
  if (asked !== undefined && asked !== 'markdown' && asked !== 'bytes')
    throw new InvalidArgumentError('as', `as=${clip(asked)} is not one of markdown, bytes`, {
      valid: ['markdown', 'bytes'],
    });
  const as: 'markdown' | 'bytes' | undefined = asked;
  const pages = seen.get('pages');
  if (pages !== undefined) parts.pages = numberRange('pages', pages);
  const slides = seen.get('slides');
  if (slides !== undefined) parts.slides = numberRange('slides', slides);
  const sheet = seen.get('sheet');
  if (sheet !== undefined) {
    if (sheet === '') throw new InvalidArgumentError('sheet', 'sheet= needs a sheet name');
    parts.sheet = sheet;
  }
  const range = seen.get('range');
  if (range !== undefined) parts.range = range;
  if (as === 'bytes' && Object.keys(parts).length > 0)
    throw new InvalidArgumentError(
      'as',
      'as=bytes reads the whole original; pages, sheets and slides are parts of the rendition',
      {},
    );
  return { source, parts, given: true, ...definedProps({ as }) };
}

/** `START-END`, `START-` (to the end) or `N`: 1-based and inclusive. */
function numberRange(argument: 'pages' | 'slides', value: string): NumberRange {
  const found = /^([1-9]\d{0,8})(?:(-)([1-9]\d{0,8})?)?$/.exec(value);
  if (found === null)
    throw new InvalidArgumentError(
      argument,
      `${argument}=${clip(value)} is not a range like 3-5, 3- or 3 (1-based)`,
      {},
    );
  const start = Number(found[1]);
  if (found[2] === undefined) return { start, end: start };
  if (found[3] === undefined) return { start };
  const end = Number(found[3]);
  if (end < start)
    throw new InvalidArgumentError(argument, `${argument}=${value}: END comes before START`, {});
  return { start, end };
}

function decode(parameter: string, raw: string, href: string): string {
  if (raw.length > MAX_VALUE * 3)
    throw new InvalidArgumentError(
      parameter,
      `the value is longer than ${MAX_VALUE} characters`,
      {},
    );
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    throw new InvalidArgumentError(parameter, 'the value is not valid percent-encoding', {
      uri: clip(href),
    });
  }
}

function clip(value: string): string {
  return value.length > 80 ? `${value.slice(0, 80)}…` : value;
}
