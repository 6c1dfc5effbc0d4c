/**
 * An in-memory provider for registry tests, and to prove the contract suite itself: a sorted set of
 * names under a root, keyset-paged by name, optionally with templates, oversized blobs, short pages
 * (as a provider skipping ignored entries would return) and a close() that counts its calls.
 */
import { NotFoundError } from '../../src/core/errors.js';
import type { Provider, ReadResult, ResourceTemplateInfo } from '../../src/core/types.js';

export interface MemoryProviderOptions {
  root: string;
  names: string[];
  templates?: ResourceTemplateInfo[];
  /** Names read as a base64 blob of this many characters instead of text. */
  blobs?: Record<string, number>;
  /** Return at most this many items per call, whatever the limit. */
  maxPage?: number;
}

export interface MemoryProvider extends Provider {
  readonly closeCalls: number;
  readonly listCalls: { after: string | undefined; limit: number }[];
}

// eslint-disable-next-line no-control-regex -- control characters are exactly what it refuses
const KEY = /^[^\u0000-\u001f]{1,1024}$/;

export function memoryProvider(options: MemoryProviderOptions): MemoryProvider {
  const names = [...new Set(options.names)].sort();
  const known = new Set(names);
  let closeCalls = 0;
  const listCalls: MemoryProvider['listCalls'] = [];
  const uriOf = (name: string): string => `${options.root}${name}`;

  return {
    name: 'memory',
    root: options.root,
    get closeCalls() {
      return closeCalls;
    },
    listCalls,

    async list(after, limit) {
      listCalls.push({ after, limit });
      const start = after === undefined ? 0 : names.findIndex((n) => n > after);
      const from = start < 0 ? names.length : start;
      const size = Math.min(limit, options.maxPage ?? limit);
      const slice = names.slice(from, from + size);
      const items = slice.map((name) => ({ uri: uriOf(name), name, mimeType: 'text/plain' }));
      return from + size < names.length && slice.length > 0
        ? { items, last: slice[slice.length - 1]! }
        : { items };
    },

    isValidKey(key) {
      return KEY.test(key);
    },

    async read(uri): Promise<ReadResult> {
      const name = uri.startsWith(options.root) ? uri.slice(options.root.length) : undefined;
      if (name === undefined || !known.has(name)) throw new NotFoundError(uri);
      const blob = options.blobs?.[name];
      if (blob !== undefined)
        return {
          contents: [{ uri, mimeType: 'application/octet-stream', blob: 'A'.repeat(blob) }],
        };
      return { contents: [{ uri, mimeType: 'text/plain', text: `content of ${name}` }] };
    },

    templates() {
      return options.templates ?? [];
    },

    async close() {
      closeCalls += 1;
    },
  };
}

/** `count` templates named `<prefix>-<i>`. */
export function templatesNamed(prefix: string, count: number): ResourceTemplateInfo[] {
  return Array.from({ length: count }, (_, i) => ({
    uriTemplate: `${prefix}://t${i}/{id}`,
    name: `${prefix}-${i}`,
  }));
}
