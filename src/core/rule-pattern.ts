/**
 * An access rule's URI pattern, compiled to a test over URIs in the match form (see
 * `match-form.ts`): the pattern's literal text is brought to that form too, so `café`,
 * `caf%C3%A9` and `cafe\u0301`, `my docs` and `my%20docs`, `a#b` and `a%23b` all mean one name.
 *
 * The glob syntax:
 * - `*` any characters within one segment (a whole segment `*` needs at least one);
 * - `**` as a whole segment: any number of segments, none included (`a/**` covers `a` and all below);
 * - `?` one character of a name; `[abc]`, `[a-z]`, `[!abc]` one character of a set;
 * - `{a,b}` either alternative (each may hold globs; braces without a comma are literal).
 * Every other character is literal — `(`, `)`, `!`, `+`, `@`, spaces, `#`, a `%` that begins no
 * escape. To match a glob character literally, percent-encode it (`%2A` `*`, `%3F` `?`, `%5B` `[`,
 * `%5D` `]`, `%7B` `{`, `%7D` `}`) or put a backslash before it (`\*`). A pattern ending in literal
 * text also matches with a trailing `/` (a directory's URI) and without one.
 *
 * The scheme is compared case-insensitively, and for the WHATWG special schemes (`file`, `http`,
 * `https`, …) so is the host, with the default port dropped and an international name in its
 * ASCII form, as URIs are normalised. Other schemes' hosts (`git://Repo/`, `db://App/`) are
 * compared exactly, as they are routed.
 */
import { literalForm, strayPercents } from './match-form.js';

export interface RulePattern {
  /** Whether the URI in match form (`matchForm`) matches. */
  test: (form: string) => boolean;
  /** The pattern's literal beginning, in match form, before its first glob. */
  prefix: string;
  /** Whether the pattern covers everything below its prefix (ends with `/**`, or is `**`). */
  subtree: boolean;
  /**
   * Whether the pattern is its literal beginning and then `**` alone (`db://app/**`, `**`): it then
   * matches every URI that begins with `prefix` — what `subtree` with a glob before the `/**`
   * (`db://app/{,x}/**`) does not promise.
   */
  wholeSubtree: boolean;
  /** What in the pattern cannot match anything, or is read other than it may look (for `reservoir check`). */
  problems: string[];
}

const SPECIAL = new Set(['file', 'http', 'https', 'ws', 'wss', 'ftp']);
const GLOB = /[*?[\]{}]/;
const ONE_CHAR = '(?:%[0-9A-F]{2}|[^/])';

type Node =
  | { kind: 'literal'; text: string }
  | { kind: 'star'; whole: boolean }
  | { kind: 'globstar'; atStart: boolean; atEnd: boolean }
  | { kind: 'one' }
  | { kind: 'class'; source: string }
  | { kind: 'alternatives'; options: Node[][] };

/**
 * Whether `pattern` could match some URI under `prefix` (both in match form), judged by its literal
 * beginning: it lies inside the prefix, or ends before it with a glob after. Never false for a
 * pattern that can match there; true for some that cannot.
 */
export function couldMatchUnder(pattern: RulePattern, prefix: string): boolean {
  return pattern.prefix.startsWith(prefix) || prefix.startsWith(pattern.prefix);
}

export function compileRulePattern(pattern: string): RulePattern {
  const problems: string[] = [];
  const text = canonicalAuthority(pattern, problems).normalize('NFC');
  for (const stray of strayPercents(text))
    problems.push(
      `'${stray}' is not a percent-escape (two hex digits after %): it is read as a literal '%'; write %25 for a percent sign`,
    );
  const nodes = parse(text, problems);
  const literal = (nodes: Node[]): string => {
    let out = '';
    for (const node of nodes) {
      if (node.kind !== 'literal') break;
      out += node.text;
    }
    return out;
  };
  const last = nodes[nodes.length - 1];
  let body = emit(nodes, problems);
  // A pattern ending in literal text names a resource: a directory's trailing `/` is optional.
  if (last?.kind === 'literal') body = `${body.endsWith('/') ? body.slice(0, -1) : body}/?`;
  const regex = new RegExp(`^${body}$`, 'su');
  return {
    test: (form) => regex.test(form),
    prefix: literalForm(literal(nodes)).text,
    subtree: last?.kind === 'globstar' && last.atEnd,
    wholeSubtree:
      last?.kind === 'globstar' &&
      last.atEnd &&
      nodes.slice(0, -1).every((node) => node.kind === 'literal'),
    problems: [...new Set(problems)],
  };
}

/** Lower-cases the scheme and (special schemes) canonicalises the host, as `new URL` does for URIs. */
function canonicalAuthority(pattern: string, problems: string[]): string {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(pattern);
  if (scheme === null) return pattern;
  const name = scheme[1]!.toLowerCase();
  const rest = pattern.slice(scheme[0].length);
  if (!SPECIAL.has(name) || !rest.startsWith('//')) return `${name}:${rest}`;
  const end = rest.indexOf('/', 2);
  const authority = end < 0 ? rest.slice(2) : rest.slice(2, end);
  const path = end < 0 ? '' : rest.slice(end);
  if (GLOB.test(authority)) return `${name}://${authority.toLowerCase()}${path}`;
  try {
    return `${name}://${new URL(`${name}://${authority}/`).host}${path}`;
  } catch {
    problems.push(`'${authority}' is not a valid host for ${name}: URIs`);
    return `${name}://${authority.toLowerCase()}${path}`;
  }
}

/** Parses glob syntax; `\x` and unparsable glob characters become literal text. */
function parse(text: string, problems: string[]): Node[] {
  const nodes: Node[] = [];
  let literal = '';
  const flush = (): void => {
    if (literal !== '') nodes.push({ kind: 'literal', text: literal });
    literal = '';
  };
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i]!;
    if (char === '\\') {
      const next = text[i + 1];
      if (next === undefined) {
        problems.push('a trailing \\ escapes nothing: it is read as a literal backslash');
        literal += '\\';
      } else {
        // An escaped `%`, `?` or `#` is a character of a name, escaped as providers escape it.
        literal +=
          next === '%' || next === '?' || next === '#'
            ? `%${next.charCodeAt(0).toString(16).toUpperCase()}`
            : next;
        i += 1;
      }
    } else if (char === '*') {
      const double = text[i + 1] === '*';
      const start = i;
      while (text[i + 1] === '*') i += 1;
      const atStart = start === 0 || text[start - 1] === '/';
      const atEnd = i + 1 === text.length || text[i + 1] === '/';
      flush();
      if (double && atStart && atEnd)
        nodes.push({ kind: 'globstar', atStart: start === 0, atEnd: i + 1 === text.length });
      else nodes.push({ kind: 'star', whole: atStart && atEnd });
    } else if (char === '?') {
      flush();
      nodes.push({ kind: 'one' });
    } else if (char === '[') {
      const cls = parseClass(text, i, problems);
      if (cls === undefined) literal += char;
      else {
        flush();
        nodes.push({ kind: 'class', source: cls.source });
        i = cls.end;
      }
    } else if (char === '{') {
      const alt = splitBraces(text, i);
      if (alt === undefined) {
        if (text.indexOf('}', i) < 0)
          problems.push(
            `'{' opens alternatives that never close: it is read as a literal '{'; write %7B to say so`,
          );
        literal += char;
      } else {
        flush();
        nodes.push({
          kind: 'alternatives',
          options: alt.options.map((option) => parse(option, problems)),
        });
        i = alt.end;
      }
    } else {
      literal += char;
    }
  }
  flush();
  return nodes;
}

/** A `[...]` set starting at `start`: its regular-expression source and where it ends, or undefined (read literally). */
function parseClass(
  text: string,
  start: number,
  problems: string[],
): { source: string; end: number } | undefined {
  let i = start + 1;
  const negated = text[i] === '!' || text[i] === '^';
  if (negated) i += 1;
  const members: string[] = [];
  let first = true;
  for (; i < text.length; i += 1) {
    let char = text[i]!;
    if (char === ']' && !first) break;
    first = false;
    if (char === '\\' && i + 1 < text.length) char = text[++i]!;
    const codePoint = text.codePointAt(i)!;
    if (codePoint > 0xffff) {
      char = String.fromCodePoint(codePoint);
      i += 1;
    }
    if (text[i + 1] === '-' && text[i + 2] !== undefined && text[i + 2] !== ']') {
      const to = String.fromCodePoint(text.codePointAt(i + 2)!);
      if (to.codePointAt(0)! < codePoint) {
        problems.push(
          `the range '${char}-${to}' in '${text.slice(start, text.indexOf(']', i) + 1)}' runs backwards and matches nothing`,
        );
        return undefined;
      }
      members.push(`${classChar(char)}-${classChar(to)}`);
      i += 1 + to.length;
    } else {
      members.push(classChar(char));
    }
  }
  if (i >= text.length) {
    problems.push(
      `'[' opens a character set that never closes: it is read as a literal '['; write %5B to say so`,
    );
    return undefined;
  }
  return { source: negated ? `[^/${members.join('')}]` : `[${members.join('')}]`, end: i };
}

function classChar(char: string): string {
  return /[\\\]^[-]/.test(char) ? `\\${char}` : char;
}

/** `{a,b}` starting at `start` (nesting and `\`-escapes respected): its alternatives, or undefined without a top-level comma. */
function splitBraces(text: string, start: number): { options: string[]; end: number } | undefined {
  const options: string[] = [];
  let depth = 0;
  let from = start + 1;
  for (let i = start + 1; i < text.length; i += 1) {
    const char = text[i];
    if (char === '\\') i += 1;
    else if (char === '{') depth += 1;
    else if (char === '}' && depth > 0) depth -= 1;
    else if (char === ',' && depth === 0) {
      options.push(text.slice(from, i));
      from = i + 1;
    } else if (char === '}') {
      if (options.length === 0) return undefined;
      options.push(text.slice(from, i));
      return { options, end: i };
    }
  }
  return undefined;
}

/** The regular-expression source of `nodes`. */
function emit(nodes: readonly Node[], problems: string[]): string {
  let out = '';
  nodes.forEach((node, index) => {
    switch (node.kind) {
      case 'literal': {
        const form = literalForm(node.text);
        for (const escape of form.invalid)
          problems.push(`'${escape}' is not part of any UTF-8 character, so no name holds it`);
        out += escapeRegex(form.text);
        return;
      }
      case 'star':
        out += node.whole ? '[^/]+' : '[^/]*';
        return;
      case 'one':
        out += ONE_CHAR;
        return;
      case 'class':
        out += node.source;
        return;
      case 'alternatives':
        out += `(?:${node.options.map((option) => emit(option, problems)).join('|')})`;
        return;
      case 'globstar': {
        const next = nodes[index + 1];
        if (node.atStart && node.atEnd) out += '[^]*';
        else if (node.atEnd) out = `${out.endsWith('/') ? out.slice(0, -1) : out}(?:/[^]*)?`;
        else if (node.atStart) {
          // `**/x`: any leading segments; the `/` after `**` belongs to them.
          out += '(?:[^]*/)?';
          if (next?.kind === 'literal')
            (nodes as Node[])[index + 1] = { kind: 'literal', text: next.text.slice(1) };
        } else {
          // `a/**/b`: the `/` before `**` and the segments it stands for are optional together.
          out = `${out.endsWith('/') ? out.slice(0, -1) : out}(?:/[^]*)?`;
        }
        return;
      }
    }
  });
  return out;
}

function escapeRegex(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}
