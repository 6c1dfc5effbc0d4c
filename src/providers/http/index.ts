/**
 * The HTTP API provider: upstream endpoints from config served as `api://<name>/…` resources. An
 * endpoint whose URI has no variables is a listed resource; one with variables is a resource
 * template (completed from configured values). Reads go through a conditional, byte-bounded cache
 * (`cache.ts`); watches poll (`poll.ts`); every request goes through `client.ts`, which enforces the
 * SSRF rules (`address.ts`), the deadline and the size cap. Values reach the upstream URL only
 * percent-encoded, one segment or parameter each (`template.ts`).
 */
import { createHash } from 'node:crypto';
import type { LookupFunction } from 'node:net';
import { ConfigError, NotFoundError, TooLargeError } from '../../core/errors.js';
import { silentLogger, type Logger } from '../../core/log.js';
import type {
  CallContext,
  Completer,
  Provider,
  ProviderFactory,
  ReadResult,
  ResourceInfo,
  ResourceTemplate,
} from '../../core/types.js';
import { addressPolicy } from '../utils/address.js';
import { httpStatusFailure, providerError } from '../utils/errors.js';
import { entrySize, freshness, ResponseCache, type CachedContent } from './cache.js';
import { unavailable, UpstreamClient } from './client.js';
import { toContent } from './content.js';
import {
  DEFAULT_CACHE_MAX_BYTES,
  DEFAULT_MAX_REDIRECTS,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_POLL_MS,
  DEFAULT_TIMEOUT_MS,
  httpSourceOptions,
  type HttpSourceOptions,
} from './options.js';
import { readLimits } from '../utils/read-limit.js';
import { Poller, type PollOutcome } from './poll.js';
import { compileEndpoint, parseBase, rootOf, type CompiledEndpoint } from './template.js';
import { definedProps } from '../../core/defined.js';

export const PROVIDER_NAME = 'http';

export { httpSourceOptions } from './options.js';
export type { HttpSourceOptions, HttpEndpointOptions } from './options.js';

/** The config options plus what only code can pass. */
export interface HttpProviderOptions extends HttpSourceOptions {
  /** Where warnings go (a watched resource failing its first poll). Headers are never logged. @default silent */
  logger?: Logger | undefined;
  /** DNS resolution, before the address check (custom resolvers, tests). @default dns.lookup */
  resolve?: LookupFunction | undefined;
}

/** An HTTP provider: the Provider contract plus introspection of its cache and polls. */
export interface HttpProvider extends Provider {
  close(): Promise<void>;
  stats(): { cacheEntries: number; cacheBytes: number; polled: number };
}

interface Endpoint {
  compiled: CompiledEndpoint;
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  mimeType?: string | undefined;
  complete?: Record<string, string[]> | undefined;
}

/** A client URI resolved to its endpoint and upstream URL. */
interface Target {
  uri: string;
  endpoint: Endpoint;
  url: URL;
}

/** The longest key `list` can have returned (a normalised api:// URI). */
const MAX_KEY_LENGTH = 65_536;

export const httpProvider = ((options: HttpProviderOptions): HttpProvider => {
  const { logger = silentLogger, resolve, ...config } = options;
  const parsed = httpSourceOptions.safeParse(config);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(
      issue.path.length === 0 ? 'http' : issue.path.map(String).join('.'),
      issue.message,
    );
  }
  const o = parsed.data;
  const root = rootOf(o.name);
  const base = parseBase(o.baseUrl);
  const endpoints: Endpoint[] = o.endpoints.map((e) => ({
    ...e,
    compiled: compileEndpoint(o.name, o.baseUrl, e),
  }));
  const fixed = endpoints
    .filter((e) => e.compiled.fixed)
    .sort((a, b) => (a.compiled.uriTemplate < b.compiled.uriTemplate ? -1 : 1));
  const ordered = [...fixed, ...endpoints.filter((e) => !e.compiled.fixed)];
  const cache = new ResponseCache(o.cacheMaxBytes ?? DEFAULT_CACHE_MAX_BYTES);
  const maxBodyBytes = o.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const client = new UpstreamClient({
    origin: base.origin,
    headers: o.headers ?? {},
    timeoutMs: o.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxBytes: maxBodyBytes,
    maxRedirects: o.maxRedirects ?? DEFAULT_MAX_REDIRECTS,
    policy: addressPolicy(o.allowPrivateNetworks ?? false, o.allowedNetworks ?? []),
    resolve,
  });
  const poller = new Poller(o.pollMs ?? DEFAULT_POLL_MS, logger);
  let closed = false;

  const info = (e: Endpoint): ResourceInfo => ({
    uri: e.compiled.uriTemplate,
    name: e.name,
    ...definedProps({ title: e.title, description: e.description, mimeType: e.mimeType }),
  });

  /** The endpoint and upstream URL `uri` names; NotFoundError when it names none. */
  function target(uri: string): Target {
    for (const endpoint of ordered) {
      const values = endpoint.compiled.match(uri);
      if (values !== null) return { uri, endpoint, url: endpoint.compiled.expand(values) };
    }
    throw new NotFoundError(uri);
  }

  /**
   * The content of `t`: from the cache while fresh (unless `revalidate`), else from upstream,
   * conditionally when a validator is known. `known` supplies validators when nothing is cached.
   */
  async function load(
    t: Target,
    signal: AbortSignal,
    revalidate: boolean,
    known?: Validators,
    ctx?: CallContext,
  ): Promise<Loaded> {
    if (closed) throw unavailable(t.uri, 'the source is closed');
    const key = t.url.href;
    const cached = cache.maxBytes > 0 ? cache.get(key) : undefined;
    const now = Date.now();
    if (!revalidate && cached !== undefined && cached.freshUntil > now)
      return { content: cached.content, ttlMs: cached.freshUntil - now };
    const validators = cached ?? known;
    const conditional: Record<string, string> = {};
    if (validators?.etag !== undefined) conditional['if-none-match'] = validators.etag;
    if (validators?.lastModified !== undefined)
      conditional['if-modified-since'] = validators.lastModified;
    // The body is refused by its Content-Length, or counted while it streams, against the
    // source's cap and the answer's budget: never buffered past what could be sent.
    const limit = readLimits(ctx, maxBodyBytes).text;
    const res = await client.get(t.url, conditional, t.uri, signal, limit);
    const at = Date.now();
    if (res.status === 304 && Object.keys(conditional).length > 0) {
      if (cached === undefined) return { notModified: true };
      const fresh = freshness(res.headers, at);
      if (fresh.store) {
        cached.freshUntil = fresh.freshUntil;
        if (res.headers.etag !== undefined) cached.etag = res.headers.etag;
        if (res.headers['last-modified'] !== undefined)
          cached.lastModified = res.headers['last-modified'];
      } else {
        cache.delete(key);
      }
      return { content: cached.content, ttlMs: Math.max(0, cached.freshUntil - at) };
    }
    if (res.status < 200 || res.status > 299) {
      const failure = httpStatusFailure(res.status);
      if (failure.kind === 'missing') cache.delete(key);
      throw providerError(t.uri, failure);
    }
    const content = toContent(res.headers['content-type'], res.body, t.endpoint.mimeType);
    const fresh = freshness(res.headers, at);
    const etag = res.headers.etag;
    const lastModified = res.headers['last-modified'];
    if (fresh.store && cache.maxBytes > 0) {
      cache.set(key, {
        content,
        freshUntil: fresh.freshUntil,
        bytes: entrySize(content, key),
        etag,
        lastModified,
      });
    } else {
      cache.delete(key);
    }
    return {
      content,
      ttlMs: fresh.store ? Math.max(0, fresh.freshUntil - at) : 0,
      validators: { etag, lastModified },
    };
  }

  async function read(uri: string, ctx: CallContext): Promise<ReadResult> {
    const t = target(uri);
    const loaded = await load(t, ctx.signal, false, undefined, ctx);
    if ('notModified' in loaded)
      throw unavailable(uri, 'the upstream answered 304 to an unconditional request');
    const { mimeType, text, blob } = loaded.content;
    const contents =
      text !== undefined ? { uri, mimeType, text } : { uri, mimeType, blob: blob ?? '' };
    return loaded.ttlMs > 0
      ? { contents: [contents], ttlMs: loaded.ttlMs }
      : { contents: [contents] };
  }

  const templates: ResourceTemplate[] = endpoints
    .filter((e) => !e.compiled.fixed)
    .map((e) => ({
      uriTemplate: e.compiled.uriTemplate,
      name: e.name,
      ...definedProps({
        title: e.title,
        description: e.description,
        mimeType: e.mimeType,
        complete: e.complete === undefined ? undefined : completers(e.complete),
      }),
      read: (uri, _variables, ctx) => read(uri, ctx),
    }));

  return {
    name: PROVIDER_NAME,
    root,

    async list(after, limit) {
      const start =
        after === undefined ? 0 : fixed.findIndex((e) => e.compiled.uriTemplate > after);
      const from = start < 0 ? fixed.length : start;
      const slice = fixed.slice(from, from + limit);
      const items = slice.map(info);
      return from + limit < fixed.length
        ? { items, last: slice[slice.length - 1]!.compiled.uriTemplate }
        : { items };
    },

    isValidKey(key) {
      // eslint-disable-next-line no-control-regex -- control characters are exactly what it refuses
      return key.length <= MAX_KEY_LENGTH && key.startsWith(root) && !/[\u0000-\u001f]/.test(key);
    },

    read,

    async connect(signal) {
      // The first listed endpoint, read as a client reads it (status, credentials and body
      // checked); with none listed, the base URL asked once, where any answer shows the upstream
      // is reachable.
      const first = fixed[0];
      if (first !== undefined) {
        await read(first.compiled.uriTemplate, { signal });
        return;
      }
      try {
        await client.get(new URL(base.href), {}, root, signal, 64 * 1024);
      } catch (error) {
        if (!(error instanceof TooLargeError)) throw error;
      }
    },

    canonical(uri) {
      // The endpoint's resource: path values in one spelling, the query (a view of it) left out.
      for (const endpoint of ordered) {
        const values = endpoint.compiled.match(uri);
        if (values !== null) return endpoint.compiled.canonical(values);
      }
      throw new NotFoundError(uri);
    },

    templates: () => templates,

    async watch(uri, onChange) {
      const t = target(uri);
      let known: Validators | undefined;
      return poller.watch(
        uri,
        async (signal, first): Promise<PollOutcome> => {
          const loaded = await load(t, signal, !first, known);
          if ('notModified' in loaded) return 'unchanged';
          if (loaded.validators !== undefined) known = loaded.validators;
          return { hash: contentHash(loaded.content) };
        },
        onChange,
      );
    },

    async close() {
      closed = true;
      poller.close();
      cache.clear();
      client.close();
    },

    stats: () => ({ cacheEntries: cache.size, cacheBytes: cache.bytes, polled: poller.size }),
  };
}) satisfies ProviderFactory<HttpProviderOptions>;

interface Validators {
  etag?: string | undefined;
  lastModified?: string | undefined;
}

type Loaded =
  { content: CachedContent; ttlMs: number; validators?: Validators } | { notModified: true };

function completers(lists: Record<string, string[]>): Record<string, Completer> {
  return Object.fromEntries(
    Object.entries(lists).map(([name, values]) => {
      const sorted = [...new Set(values)].sort();
      const completer: Completer = (value) => {
        const matches = sorted.filter((v) => v.startsWith(value));
        return {
          values: matches.slice(0, 100),
          total: matches.length,
          hasMore: matches.length > 100,
        };
      };
      return [name, completer];
    }),
  );
}

function contentHash(content: CachedContent): string {
  return createHash('sha256')
    .update(content.mimeType)
    .update('\0')
    .update(content.text ?? `\0${content.blob ?? ''}`)
    .digest('base64');
}
