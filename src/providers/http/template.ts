/**
 * The two templates of an endpoint, parsed once from config:
 *
 *   - the api:// URI template clients see, in a deliberately small RFC 6570 subset — each path
 *     segment is a literal or holds one `{var}` (with an optional literal prefix and suffix), and an
 *     optional final `{?a,b}` names query parameters — so that matching is a plain segment-by-segment
 *     comparison, linear in the URI, with no regular expression;
 *   - the upstream URL template, also a subset: `{v}`, `{/v}`, `{.v}`, `{?a,b}` and `{&a}`. Reserved
 *     (`{+v}`) and fragment (`{#v}`) expansion are refused, because they let a value carry `/`, `?`
 *     and `#` into the URL by design.
 *
 * Expansion percent-encodes every character of a value outside RFC 3986's unreserved set (so `/`,
 * `?`, `#`, `&`, `=`, `@`, `\`, `%`, CR and LF never act as delimiters), refuses a path value that
 * holds a separator or would form a `.` or `..` segment in any escaping an upstream might decode
 * (WHATWG URLs and servers remove dot segments, `%2e%2e` included; some decode `%2F` or twice:
 * utils/path-segments.ts), and checks that the parsed result is exactly the text built — same
 * origin, under the base path. Query values may hold anything: they are never a path. The SDK's
 * `UriTemplate.expand` was not used: it leaves multi-variable expressions unencoded and keeps `..`
 * intact, and providers import only `core`.
 */
import { InvalidArgumentError } from '../../core/errors.js';
import { hasDotSegment, hasSeparator } from '../utils/path-segments.js';

/** A config field that cannot be used; `field` names it within the endpoint (or the source). */
export class TemplateSyntaxError extends Error {
  constructor(
    readonly field: 'uri' | 'upstream' | 'baseUrl',
    message: string,
  ) {
    super(message);
    this.name = 'TemplateSyntaxError';
  }
}

export interface EndpointConfig {
  name: string;
  uri: string;
  upstream: string;
}

/** Decoded variable values; an optional query variable the URI did not carry is absent. */
export type Values = Record<string, string>;

export interface CompiledEndpoint {
  /** The absolute api:// URI template (the URI itself for a fixed endpoint). */
  readonly uriTemplate: string;
  /** Whether the URI has no variables: listed as a resource rather than served as a template. */
  readonly fixed: boolean;
  readonly variables: readonly string[];
  /** The decoded values of `href` (a normalised URI), or null when it is not this endpoint's. */
  match(href: string): Values | null;
  /** The upstream URL for `values`. Throws InvalidArgumentError for a value that cannot be sent. */
  expand(values: Values): URL;
  /**
   * The resource `values` name, for access rules: the api:// URI with its path variables in one
   * spelling (encoded as `encodeValue` does) and without the query, which selects a view of it.
   */
  canonical(values: Values): string;
}

/** The base URL, normalised: its origin, and its path ending in `/`. */
export interface Base {
  href: string;
  origin: string;
  path: string;
}

const VAR_NAME = /^[A-Za-z0-9_]+$/;
const SEGMENT_VAR = /^([^{}]*)\{([^{}]*)\}([^{}]*)$/;
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

export function parseBase(baseUrl: string): Base {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TemplateSyntaxError('baseUrl', 'expected an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TemplateSyntaxError('baseUrl', 'only http:// and https:// are supported');
  if (url.username !== '' || url.password !== '')
    throw new TemplateSyntaxError(
      'baseUrl',
      'credentials in the URL are refused; send them in headers',
    );
  if (url.search !== '' || url.hash !== '')
    throw new TemplateSyntaxError(
      'baseUrl',
      'the base URL takes no query or fragment; put them in endpoint upstream templates',
    );
  const path = url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`;
  return { href: `${url.origin}${path}`, origin: url.origin, path };
}

export function rootOf(source: string): string {
  return `api://${source}/`;
}

export function compileEndpoint(
  source: string,
  baseUrl: string,
  config: EndpointConfig,
): CompiledEndpoint {
  const root = rootOf(source);
  const base = parseBase(baseUrl);
  const api = parseApiTemplate(root, config.uri);
  const upstream = parseUpstreamTemplate(base, config.upstream, api);
  return {
    uriTemplate: api.template,
    fixed: api.variables.length === 0,
    variables: api.variables,
    match: (href) => matchApi(api, href),
    expand: (values) => expandUpstream(base, upstream, values),
    canonical: (values) =>
      `${root}${api.segments.map((s) => ('literal' in s ? s.literal : `${s.prefix}${encodeValue(values[s.name] ?? '', s.name)}${s.suffix}`)).join('/')}`,
  };
}

/** Percent-encodes everything but RFC 3986 unreserved characters (ALPHA / DIGIT / - . _ ~). */
export function encodeValue(value: string, variable: string): string {
  try {
    return encodeURIComponent(value).replace(
      /[!'()*]/g,
      (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
    );
  } catch {
    throw new InvalidArgumentError(variable, 'the value is not valid Unicode');
  }
}

// ---------------------------------------------------------------------------------------------
// api:// templates

type ApiSegment = { literal: string } | { prefix: string; name: string; suffix: string };

interface ApiTemplate {
  template: string;
  root: string;
  segments: ApiSegment[];
  query: string[];
  variables: string[];
}

function parseApiTemplate(root: string, uri: string): ApiTemplate {
  const fail = (message: string): never => {
    throw new TemplateSyntaxError('uri', message);
  };
  let rest: string;
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(uri)) {
    if (!uri.startsWith(root)) fail(`an absolute URI must start with this source's root ${root}`);
    rest = uri.slice(root.length);
  } else {
    rest = uri.replace(/^\/+/, '');
  }
  let query: string[] = [];
  const q = /\{\?([^{}]*)\}$/.exec(rest);
  if (q !== null) {
    query = q[1]!.split(',').map((n) => n.trim());
    rest = rest.slice(0, q.index);
  }
  if (/[?#]/.test(rest))
    fail('a literal query or fragment is not supported; name query parameters with a final {?a,b}');
  const segments: ApiSegment[] = rest.split('/').map((text) => {
    if (!text.includes('{') && !text.includes('}')) {
      if (DOT_SEGMENT.test(text)) fail(`'${text}' is not a valid path segment`);
      return { literal: text };
    }
    const m = SEGMENT_VAR.exec(text);
    if (m === null)
      return fail(
        `segment '${text}' must hold at most one {variable} (operators other than a final {?a,b} are not supported)`,
      );
    return { prefix: m[1]!, name: m[2]!, suffix: m[3]! };
  });
  const variables = [...segments.flatMap((s) => ('name' in s ? [s.name] : [])), ...query];
  const seen = new Set<string>();
  for (const name of variables) {
    if (!VAR_NAME.test(name))
      fail(`'{${name}}' is not a supported variable (names are letters, digits and _)`);
    if (seen.has(name)) fail(`variable '${name}' appears twice`);
    seen.add(name);
  }
  const template = `${root}${rest}${query.length > 0 ? `{?${query.join(',')}}` : ''}`;
  const sample = `${root}${segments.map((s) => ('literal' in s ? s.literal : `${s.prefix}x${s.suffix}`)).join('/')}`;
  let normalised: string;
  try {
    normalised = new URL(sample).href;
  } catch {
    return fail('the URI is malformed');
  }
  if (normalised !== sample)
    fail(
      `literal text must be in normal form (spaces and other characters percent-encoded): ${normalised}`,
    );
  return { template, root, segments, query, variables };
}

function matchApi(api: ApiTemplate, href: string): Values | null {
  if (!href.startsWith(api.root) || href.includes('#')) return null;
  const rest = href.slice(api.root.length);
  const mark = rest.indexOf('?');
  const path = mark < 0 ? rest : rest.slice(0, mark);
  const search = mark < 0 ? undefined : rest.slice(mark + 1);
  const parts = path.split('/');
  if (parts.length !== api.segments.length) return null;
  // No prototype: a variable may be called `toString` or `valueOf`, and one the URI leaves out must
  // read as absent (not as Object.prototype's function, expanded into the upstream URL), nor count
  // as given already (which refused the URI that gives it).
  const values = Object.create(null) as Values;
  for (let i = 0; i < parts.length; i += 1) {
    const part = parts[i]!;
    const segment = api.segments[i]!;
    if ('literal' in segment) {
      if (part !== segment.literal) return null;
      continue;
    }
    const { prefix, suffix, name } = segment;
    if (
      part.length <= prefix.length + suffix.length ||
      !part.startsWith(prefix) ||
      !part.endsWith(suffix)
    )
      return null;
    values[name] = decode(name, part.slice(prefix.length, part.length - suffix.length));
  }
  if (search === undefined || search === '') return values;
  if (api.query.length === 0) return null;
  for (const pair of search.split('&')) {
    const eq = pair.indexOf('=');
    const key = eq < 0 ? pair : pair.slice(0, eq);
    if (!api.query.includes(key) || key in values) return null;
    values[key] = decode(key, eq < 0 ? '' : pair.slice(eq + 1));
  }
  return values;
}

function decode(name: string, raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new InvalidArgumentError(name, 'malformed percent-encoding in the URI');
  }
}

// ---------------------------------------------------------------------------------------------
// upstream templates

type UpToken = { literal: string } | { op: '' | '/' | '.' | '?' | '&'; names: string[] };

function parseUpstreamTemplate(base: Base, upstream: string, api: ApiTemplate): UpToken[] {
  const fail = (message: string): never => {
    throw new TemplateSyntaxError('upstream', message);
  };
  let text: string;
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(upstream)) {
    if (!upstream.startsWith(base.href))
      fail(`an absolute upstream must start with baseUrl (${base.href})`);
    text = upstream;
  } else {
    text = `${base.href}${upstream.replace(/^\/+/, '')}`;
  }
  const tokens: UpToken[] = [];
  let i = 0;
  let inQuery = false;
  const pathVars = new Set(api.segments.flatMap((s) => ('name' in s ? [s.name] : [])));
  while (i < text.length) {
    const open = text.indexOf('{', i);
    const literal = open < 0 ? text.slice(i) : text.slice(i, open);
    if (literal.includes('}')) fail("unbalanced '}'");
    if (literal.includes('#')) fail('a fragment is never sent upstream');
    if (literal !== '') tokens.push({ literal });
    if (literal.includes('?')) inQuery = true;
    if (open < 0) break;
    const close = text.indexOf('}', open);
    if (close < 0) fail("unclosed '{'");
    const expr = text.slice(open + 1, close);
    const op =
      expr[0] === '/' || expr[0] === '.' || expr[0] === '?' || expr[0] === '&' ? expr[0] : '';
    if (/^[+#]/.test(expr))
      fail(
        `{${expr}}: reserved and fragment expansion are refused (a value could carry '/', '?' or '#'); use {${expr.slice(1)}}`,
      );
    const names = expr
      .slice(op.length)
      .split(',')
      .map((n) => n.trim());
    for (const name of names) {
      if (!VAR_NAME.test(name))
        fail(`{${expr}}: '${name}' is not a supported variable (no explode or prefix modifiers)`);
      if (!api.variables.includes(name))
        fail(`{${expr}}: '${name}' is not a variable of the endpoint URI`);
      if (!inQuery && op !== '?' && op !== '&' && !pathVars.has(name)) {
        fail(
          `{${expr}}: '${name}' is an optional query variable of the URI and cannot fill the upstream path`,
        );
      }
    }
    if (names.length > 1 && op !== '?' && op !== '&')
      fail(`{${expr}}: only {?a,b} and {&a,b} take several variables`);
    if (op === '?' || op === '&') inQuery = true;
    tokens.push({ op, names });
    i = close + 1;
  }
  const sample: Values = Object.fromEntries(api.variables.map((v) => [v, 'x']));
  const built = build(tokens, sample);
  let url: URL;
  try {
    url = new URL(built);
  } catch {
    return fail('the upstream URL is malformed');
  }
  if (url.origin !== base.origin || !url.pathname.startsWith(base.path))
    fail(`the upstream must stay under baseUrl (${base.href})`);
  if (url.href !== built)
    fail(
      `literal text must be in normal form (no '.' or '..' segments, special characters percent-encoded): ${url.href}`,
    );
  return tokens;
}

function build(tokens: readonly UpToken[], values: Values): string {
  let out = '';
  let hasQuery = false;
  for (const token of tokens) {
    if ('literal' in token) {
      out += token.literal;
      if (token.literal.includes('?')) hasQuery = true;
      continue;
    }
    const { op, names } = token;
    if (op === '?' || op === '&') {
      const pairs = names.flatMap((name) =>
        values[name] === undefined ? [] : [`${name}=${encodeValue(values[name], name)}`],
      );
      if (pairs.length === 0) continue;
      out += `${hasQuery ? '&' : '?'}${pairs.join('&')}`;
      hasQuery = true;
      continue;
    }
    const name = names[0]!;
    const value = values[name];
    if (value === undefined) continue;
    out += `${op}${encodeValue(value, name)}`;
  }
  return out;
}

/** The variables expanded into the upstream path (before any query). */
function pathVariables(tokens: readonly UpToken[]): string[] {
  const names: string[] = [];
  for (const token of tokens) {
    if ('literal' in token) {
      if (token.literal.includes('?')) break;
      continue;
    }
    if (token.op === '?' || token.op === '&') break;
    names.push(...token.names);
  }
  return names;
}

function expandUpstream(base: Base, tokens: readonly UpToken[], values: Values): URL {
  // A path variable fills part of one segment: no template here allows it to carry a separator
  // ({+v} and {/v*} are refused), in any escaping an upstream might decode (see path-segments.ts).
  for (const name of pathVariables(tokens)) {
    const value = values[name];
    if (value === undefined) continue;
    if (value === '')
      throw new InvalidArgumentError(
        name,
        'a path variable may not be empty (an empty segment changes the upstream path)',
      );
    if (hasSeparator(value))
      throw new InvalidArgumentError(
        name,
        "a path variable may not hold '/' or '\\', in any escaping (%2F, %5C, %252F, overlong UTF-8): it fills one path segment",
      );
  }
  const built = build(tokens, values);
  const mark = built.indexOf('?');
  const path = (mark < 0 ? built : built.slice(0, mark)).slice(base.origin.length);
  for (const segment of path.split('/')) {
    if (DOT_SEGMENT.test(segment) || hasDotSegment(segment)) {
      throw new InvalidArgumentError(
        'uri',
        "a variable value may not form a '.' or '..' path segment upstream, in any escaping (%2e, %252e, overlong UTF-8)",
      );
    }
  }
  const url = new URL(built);
  // Defence in depth: with every value encoded, parsing changes nothing and the origin is the base's.
  if (url.href !== built || url.origin !== base.origin || !url.pathname.startsWith(base.path)) {
    throw new InvalidArgumentError('uri', 'the variable values do not form a valid upstream URL');
  }
  return url;
}
