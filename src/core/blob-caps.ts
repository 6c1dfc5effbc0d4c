/**
 * Smaller caps on binary content for some callers: clients known to break on large blobs (the TS
 * SDK up to 1.16 validates base64 with a regular expression that overflows the stack on blobs above
 * ~2.7 MiB) or principals that should get less. Each rule names principals (as access rules do),
 * clients (by the `clientInfo` they send, `name` or `name@version`, with globs), or both; a read
 * whose binary contents pass the smallest cap of the rules that apply is refused with `too_large`,
 * naming the cap, the rule's reason and how to read less. Text contents are not capped here (the
 * source's `maxReadBytes` applies to everything).
 */
import { z } from 'zod';
import { principalKey, principalProblem } from './access.js';
import { ReservoirError } from './errors.js';
import type { Principal } from './principal.js';
import type { ResourceContents } from './types.js';

/** One rule of `server.limits.blobCaps`. */
export const blobCapRule = z
  .strictObject({
    principals: z.array(z.string().min(1)).min(1).optional().meta({
      description:
        'Who the cap applies to: token:NAME, oauth:SUBJECT, token:*, oauth:*, anonymous or *. Without it (and without clients): everyone.',
    }),
    clients: z.array(z.string().min(1)).min(1).optional().meta({
      description:
        "Clients the cap applies to, by the clientInfo they send at initialize: 'NAME' (any version) or 'NAME@VERSION', globs allowed, e.g. 'langchain*' or 'my-host@1.*'.",
    }),
    maxBlobBytes: z.int().min(1).meta({
      description: 'Largest binary content (decoded bytes) one read returns to these callers.',
    }),
  })
  .superRefine((rule, ctx) => {
    for (const [i, entry] of (rule.principals ?? []).entries()) {
      const problem = principalProblem(entry);
      if (problem !== undefined)
        ctx.addIssue({ code: 'custom', path: ['principals', i], message: problem });
    }
  });

export type BlobCapRule = z.input<typeof blobCapRule>;

/** Who is reading: the principal, and the client as it named itself (when known). */
export interface Reader {
  principal?: Principal | undefined;
  client?: { name: string; version?: string | undefined } | undefined;
}

interface Compiled {
  principals: Set<string> | undefined;
  clients: ((client: string) => boolean) | undefined;
  limit: number;
  reason: string;
}

export class BlobCaps {
  private readonly rules: Compiled[];

  constructor(rules: readonly BlobCapRule[]) {
    this.rules = rules.map((rule) => {
      const parsed = blobCapRule.parse(rule);
      const clients = parsed.clients?.map((p) => globMatcher(p.includes('@') ? p : `${p}@*`));
      const named = [
        parsed.principals === undefined ? undefined : `principals ${parsed.principals.join(', ')}`,
        parsed.clients === undefined ? undefined : `clients ${parsed.clients.join(', ')}`,
      ].filter((part) => part !== undefined);
      return {
        principals: parsed.principals === undefined ? undefined : new Set(parsed.principals),
        clients:
          clients === undefined
            ? undefined
            : (client: string) => clients.some((match) => match(client)),
        limit: parsed.maxBlobBytes,
        reason: named.length === 0 ? 'every caller' : named.join(' and '),
      };
    });
  }

  get size(): number {
    return this.rules.length;
  }

  /** The smallest cap that applies to `reader`, and the rule that sets it; undefined when none does. */
  capFor(reader: Reader): { limit: number; reason: string } | undefined {
    let found: Compiled | undefined;
    for (const rule of this.rules) {
      if (!this.applies(rule, reader)) continue;
      if (found === undefined || rule.limit < found.limit) found = rule;
    }
    return found === undefined ? undefined : { limit: found.limit, reason: found.reason };
  }

  /** Throws `too_large` when a binary content of `contents` passes the cap that applies to `reader`. */
  check(contents: readonly ResourceContents[], reader: Reader): void {
    if (this.rules.length === 0) return;
    const cap = this.capFor(reader);
    if (cap === undefined) return;
    for (const content of contents) {
      if (!('blob' in content)) continue;
      const size = decodedBytes(content.blob);
      if (size > cap.limit) throw new BlobTooLargeError(content.uri, size, cap.limit, cap.reason);
    }
  }

  private applies(rule: Compiled, reader: Reader): boolean {
    if (rule.principals !== undefined) {
      const principal = reader.principal;
      if (principal === undefined) return false;
      const key = principalKey(principal);
      if (
        !rule.principals.has('*') &&
        !rule.principals.has(key) &&
        !rule.principals.has(`${principal.kind}:*`)
      )
        return false;
    }
    if (rule.clients !== undefined) {
      const client = reader.client;
      if (client === undefined) return false;
      if (!rule.clients(`${client.name}@${client.version ?? ''}`)) return false;
    }
    return true;
  }
}

/** A binary content over a caller's blob cap: `too_large`, measured as `blob`, with the rule that set the cap. */
export class BlobTooLargeError extends ReservoirError {
  constructor(uri: string, size: number, limit: number, reason: string) {
    super(
      'too_large',
      `Resource too large for this client: ${uri} is ${size} bytes of binary content, over the limit of ${limit} bytes set for ${reason} (server.limits.blobCaps); read a smaller part or rendition of it, or use a client without this cap`,
      { data: { uri, size, limit, measure: 'blob', capFor: reason } },
    );
    this.name = 'BlobTooLargeError';
  }
}

/**
 * A matcher for `*` (any run of characters) and `?` (one character); everything else is literal.
 * Greedy with one backtrack point, so a hostile client name costs O(name × pattern), never more.
 */
function globMatcher(pattern: string): (value: string) => boolean {
  return (value) => {
    let p = 0;
    let v = 0;
    let star = -1;
    let resume = 0;
    while (v < value.length) {
      if (p < pattern.length && (pattern[p] === '?' || pattern[p] === value[v])) {
        p += 1;
        v += 1;
      } else if (p < pattern.length && pattern[p] === '*') {
        star = p;
        resume = v;
        p += 1;
      } else if (star >= 0) {
        p = star + 1;
        resume += 1;
        v = resume;
      } else return false;
    }
    while (p < pattern.length && pattern[p] === '*') p += 1;
    return p === pattern.length;
  };
}

function decodedBytes(blob: string): number {
  let padding = 0;
  if (blob.endsWith('==')) padding = 2;
  else if (blob.endsWith('=')) padding = 1;
  return Math.max(0, Math.floor((blob.length * 3) / 4) - padding);
}
