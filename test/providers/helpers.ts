/**
 * Shared helpers for provider and core tests: a call context, temp trees, full keyset walks, and
 * the one assertion every "must look missing" case uses.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'vitest';
import { NotFoundError } from '../../src/core/errors.js';
import type { CallContext, Provider, ResourceInfo } from '../../src/core/types.js';

export function ctx(): CallContext {
  return { signal: new AbortController().signal };
}

/** A fresh temp directory, canonical (os.tmpdir() may itself be a symlink). */
export function tempDir(prefix = 'reservoir-test-'): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

export function removeDir(path: string | undefined): void {
  if (path !== undefined) rmSync(path, { recursive: true, force: true });
}

/** Writes `files` (relative path → content) under `root`, creating directories as needed. */
export function writeTree(root: string, files: Record<string, string | Buffer>): void {
  for (const [rel, content] of Object.entries(files)) {
    const abs = join(root, rel);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, content);
  }
}

export function fileUri(abs: string): string {
  return pathToFileURL(abs).href;
}

export interface Walk {
  items: ResourceInfo[];
  pages: { size: number; last?: string }[];
}

/** Pages through a provider's whole list with `limit`, resuming after each `last`. */
export async function walkProvider(
  provider: Provider,
  limit: number,
  maxPages = 100_000,
): Promise<Walk> {
  const items: ResourceInfo[] = [];
  const pages: Walk['pages'] = [];
  let after: string | undefined;
  for (let i = 0; i < maxPages; i += 1) {
    const page = await provider.list(after, limit, ctx());
    pages.push(
      page.last === undefined
        ? { size: page.items.length }
        : { size: page.items.length, last: page.last },
    );
    items.push(...page.items);
    if (page.last === undefined) return { items, pages };
    after = page.last;
  }
  throw new Error(`${provider.name}: list did not end within ${maxPages} pages of ${limit}`);
}

export function uris(items: readonly { uri: string }[]): string[] {
  return items.map((i) => i.uri);
}

/**
 * Asserts `promise` rejects exactly like a missing resource: a NotFoundError whose data is exactly
 * `{ uri }` and whose message is `Resource not found: <uri>` — nothing that tells "outside the root"
 * or "refused" apart from "absent".
 */
export async function expectNotFound(
  promise: Promise<unknown>,
  uri?: string,
): Promise<NotFoundError> {
  let outcome: unknown;
  try {
    const value = await promise;
    outcome = new Error(
      `expected NotFoundError, but the read resolved with ${JSON.stringify(value).slice(0, 200)}`,
    );
  } catch (error) {
    outcome = error;
  }
  if (!(outcome instanceof NotFoundError)) throw outcome;
  expect(outcome.code).toBe('not_found');
  expect(Object.keys(outcome.data)).toEqual(['uri']);
  expect(outcome.message).toBe(`Resource not found: ${String(outcome.data['uri'])}`);
  if (uri !== undefined) expect(outcome.data['uri']).toBe(uri);
  return outcome;
}

/** Awaits a rejection and returns the error (fails if it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject, but it resolved');
}
