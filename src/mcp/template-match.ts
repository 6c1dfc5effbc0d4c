/**
 * A linear-time executor for the SDK `UriTemplate`'s own matching semantics.
 *
 * The SDK matches a URI by compiling a template into an anchored backtracking regular expression
 * (`^literal(.+)\?lines=([^&]+)$` for `file:///r/{+path}{?lines}`). V8 runs that in quadratic time
 * when the URI is hostile: 64 KiB of `?lines=a` repeated and a final `&` takes ~400 ms, because every
 * `?lines=` the `(.+)` can back off to restarts a scan to the end. This module answers exactly what
 * that regular expression answers — same variables, same greedy choices, same exploded-value
 * splitting — in O(length × expressions), with no regular expression at all: a backward pass marks
 * where each suffix of the pattern can match, and a forward pass makes the greedy choices the
 * backtracking engine would have made first. A differential test pins it against the SDK.
 */
import type { CompiledTemplate } from '../core/templates.js';
import type { TemplateVariables } from '../core/types.js';

/** The SDK's bounds, mirrored so a template or URI it refuses is refused here too. */
const MAX_TEMPLATE_LENGTH = 1e6;
const MAX_URI_LENGTH = 1e6;
const MAX_TEMPLATE_EXPRESSIONS = 1e4;
const OPERATORS = ['+', '#', '.', '/', '?', '&'] as const;

/**
 * What one capture group of the SDK's pattern accepts:
 *   - `any`: `(.+)` (the `+` and `#` operators);
 *   - `segment`: `([^/,]+)`;
 *   - `list`: `([^/,]+(?:,[^/,]+)*)` (exploded simple and path expressions);
 *   - `query`: `([^&]+)`.
 */
type GroupKind = 'any' | 'segment' | 'list' | 'query';

type Token = { literal: string } | { group: GroupKind; name: string; exploded: boolean };

/** Compiles `template` (validated by the SDK's parser beforehand) into a linear matcher. */
export function compileLinear(template: string): CompiledTemplate {
  const tokens = tokenize(template);
  return { match: (uri) => matchTokens(tokens, uri) };
}

/** The SDK's parse and `partToRegExp`, producing tokens instead of pattern text. */
function tokenize(template: string): Token[] {
  if (template.length > MAX_TEMPLATE_LENGTH)
    throw new Error(`Template exceeds maximum length of ${MAX_TEMPLATE_LENGTH} characters`);
  const tokens: Token[] = [];
  const literal = (text: string): void => {
    if (text === '') return;
    const last = tokens[tokens.length - 1];
    if (last !== undefined && 'literal' in last) last.literal += text;
    else tokens.push({ literal: text });
  };
  let expressions = 0;
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    if (open < 0) {
      literal(template.slice(i));
      break;
    }
    literal(template.slice(i, open));
    const close = template.indexOf('}', open);
    if (close < 0) throw new Error('Unclosed template expression');
    expressions += 1;
    if (expressions > MAX_TEMPLATE_EXPRESSIONS)
      throw new Error(`Template contains too many expressions (max ${MAX_TEMPLATE_EXPRESSIONS})`);
    const expr = template.slice(open + 1, close);
    const operator = OPERATORS.find((op) => expr.startsWith(op)) ?? '';
    const exploded = expr.includes('*');
    const names = expr
      .slice(operator.length)
      .split(',')
      .map((n) => n.replace('*', '').trim())
      .filter((n) => n.length > 0);
    if (operator === '?' || operator === '&') {
      names.forEach((name, index) => {
        literal(`${index === 0 ? operator : '&'}${name}=`);
        tokens.push({ group: 'query', name, exploded });
      });
    } else {
      // Like the SDK: only the first name of a multi-name expression is captured. An expression
      // with no name at all (`{}`) still captures, under the name `undefined`, as the SDK does.
      const name = String(names[0]);
      if (operator === '.') literal('.');
      if (operator === '/') literal('/');
      const group: GroupKind =
        operator === '+' || operator === '#' ? 'any' : exploded ? 'list' : 'segment';
      tokens.push({ group, name, exploded });
    }
    i = close + 1;
  }
  return tokens;
}

const SLASH = 0x2f;
const COMMA = 0x2c;
const AMP = 0x26;

/** Whether `code` may appear in a group of `kind` (for `list`, commas are checked separately). */
function allowed(kind: GroupKind, code: number): boolean {
  switch (kind) {
    case 'any': // `.` without the `s` flag: anything but a line terminator
      return code !== 0x0a && code !== 0x0d && code !== 0x2028 && code !== 0x2029;
    case 'segment':
      return code !== SLASH && code !== COMMA;
    case 'list':
      return code !== SLASH;
    case 'query':
      return code !== AMP;
  }
}

let scratchBuffer = new Uint8Array(4096);

/** A zeroed buffer of at least `size` bytes (the shared scratch, grown when needed). */
function scratch(size: number): Uint8Array {
  if (scratchBuffer.length < size)
    scratchBuffer = new Uint8Array(Math.max(size, scratchBuffer.length * 2));
  const view = scratchBuffer.subarray(0, size);
  view.fill(0);
  return view;
}

function matchTokens(tokens: readonly Token[], uri: string): TemplateVariables | null {
  if (uri.length > MAX_URI_LENGTH)
    throw new Error(`URI exceeds maximum length of ${MAX_URI_LENGTH} characters`);
  // A URI lacking one of the template's literals cannot match (a plain file URI against
  // `…{+path}{?lines}` has no `?lines=`): answered without building the tables.
  for (const token of tokens) if ('literal' in token && !uri.includes(token.literal)) return null;
  const n = uri.length;
  const m = tokens.length;
  // Backward: ok[k][i] = 1 when tokens k… match uri[i…n) exactly. The tables are views of one
  // scratch buffer, reused across calls (matching is synchronous), so a hostile URI costs no garbage.
  const width = n + 1;
  const table = scratch(width * (m + 1));
  const ok: Uint8Array[] = new Array<Uint8Array>(m + 1);
  for (let k = 0; k <= m; k += 1) ok[k] = table.subarray(k * width, (k + 1) * width);
  ok[m]![n] = 1;
  for (let k = m - 1; k >= 0; k -= 1) {
    const token = tokens[k]!;
    const next = ok[k + 1]!;
    const here = ok[k]!;
    if ('literal' in token) {
      const text = token.literal;
      const len = text.length;
      // The leading literal is only ever tried at the start.
      const to = k === 0 ? Math.min(0, n - len) : n - len;
      for (let i = 0; i <= to; i += 1) {
        if (next[i + len] === 1 && uri.startsWith(text, i)) here[i] = 1;
      }
    } else {
      const kind = token.group;
      const list = kind === 'list';
      // Scanning right to left: `end` is the earliest end a group starting here may take (its
      // successor matches there; a list never ends just after a comma), `far` the furthest it may
      // reach (its run of allowed characters; a list never crosses ",,").
      let end = n + 1;
      let far = n;
      for (let i = n - 1; i >= 0; i -= 1) {
        const code = uri.charCodeAt(i);
        if (next[i + 1] === 1 && !(list && code === COMMA)) end = i + 1;
        if (!allowed(kind, code)) {
          far = i;
          continue;
        }
        if (list && code === COMMA) {
          if (i + 1 < n && uri.charCodeAt(i + 1) === COMMA) far = i + 1;
          continue; // a list never starts with a comma
        }
        if (end <= far) here[i] = 1;
      }
    }
  }
  if (ok[0]![0] !== 1) return null;
  // Forward: the backtracking engine's first success takes each group as long as the rest allows:
  // the latest feasible end within its run.
  // No prototype: a variable's name is the template's, and `__proto__` would set the prototype
  const result = Object.create(null) as TemplateVariables;
  let at = 0;
  for (let k = 0; k < m; k += 1) {
    const token = tokens[k]!;
    if ('literal' in token) {
      at += token.literal.length;
      continue;
    }
    const kind = token.group;
    const list = kind === 'list';
    const next = ok[k + 1]!;
    let far = at;
    while (far < n) {
      const code = uri.charCodeAt(far);
      if (
        !allowed(kind, code) ||
        (list && code === COMMA && far + 1 < n && uri.charCodeAt(far + 1) === COMMA)
      )
        break;
      far += 1;
    }
    if (list && far < n && uri.charCodeAt(far) === COMMA) far += 1; // the ",," case: the first comma is in reach
    let stop = far;
    while (stop > at && !(next[stop] === 1 && !(list && uri.charCodeAt(stop - 1) === COMMA)))
      stop -= 1;
    const value = uri.slice(at, stop);
    result[token.name] = token.exploded && value.includes(',') ? value.split(',') : value;
    at = stop;
  }
  return result;
}
