// The index can lag its source (a catch-up still running after a restart, a change not heard yet):
// a hit whose resource the source no longer serves — deleted, or a secret skipped since it was
// indexed — is left out of the answer, through the real SDK client, rather than named with an
// empty snippet. A resource still served but unreadable as such keeps its hit.
import type { CallToolResult } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, NotFoundError } from '../../src/core/errors.js';
import type { Provider, ReadResult, ResourceInfo } from '../../src/core/types.js';
import { createReservoir } from '../../src/server/index.js';
import { builtinTools } from '../../src/tools/index.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';
import { connectInProcess } from '../subscriptions/harness.js';
import { textOf } from '../tools/helpers.js';

const ROOT = 'mem://stale/';
const NAMES = ['kept.txt', 'gone.txt', 'odd.txt'];
const state = makeTempDir('reservoir-stale-hits-');
afterAll(() => removeTree(state));

/** A source listing three texts that all hold one word, and hears of no change: `gone` reads fail as not found, `odd` as unreadable. */
function source(): { mount: Provider; gone: Set<string>; odd: Set<string> } {
  const gone = new Set<string>();
  const odd = new Set<string>();
  const info = (name: string): ResourceInfo => ({
    uri: `${ROOT}${name}`,
    name,
    mimeType: 'text/plain',
    size: 40,
    annotations: { lastModified: '2026-11-27T00:00:00.000Z' },
  });
  const mount = {
    root: ROOT,
    name: 'stale',
    list: async () => ({ items: NAMES.map(info) }),
    read: async (uri: string): Promise<ReadResult> => {
      if (gone.has(uri)) throw new NotFoundError(uri);
      if (odd.has(uri)) throw new InvalidArgumentError('uri', 'needs its parameters');
      return { contents: [{ uri, mimeType: 'text/plain', text: `the zebrafish in ${uri}` }] };
    },
  } as unknown as Provider;
  return { mount, gone, odd };
}

describe('hits the index still holds for resources no longer served', () => {
  it('leaves out a hit whose read is not found, and keeps one unreadable as such', async () => {
    const { mount, gone, odd } = source();
    const reservoir = createReservoir({
      providers: [mount],
      search: { stateDir: state, sources: [ROOT] },
    });
    const search = reservoir.search!;
    for (const tool of builtinTools(reservoir.registry, { search: { open: () => search.open() } }))
      reservoir.tools.add(tool);
    const { client } = await connectInProcess(reservoir, '2026');
    try {
      const uris = async (): Promise<string[]> => {
        const result = (await client.callTool({
          name: 'search_resources',
          arguments: { query: 'zebrafish' },
        })) as CallToolResult;
        expect(result.isError ?? false, textOf(result)).toBe(false);
        return (result.structuredContent as { hits: { uri: string }[] }).hits
          .map((h) => h.uri)
          .sort();
      };
      await (await search.open()).idle();
      expect(await uris()).toEqual(NAMES.map((n) => `${ROOT}${n}`).sort());
      gone.add(`${ROOT}gone.txt`);
      odd.add(`${ROOT}odd.txt`);
      expect(await uris()).toEqual([`${ROOT}kept.txt`, `${ROOT}odd.txt`]);
    } finally {
      await client.close();
      await reservoir.close();
    }
  });
});
