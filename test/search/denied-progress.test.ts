// While the first build runs, a caller that access rules restrict is told only about what it may
// see: over a real HTTP socket (real SDK client), its progress notifications carry no counts and its
// answer's `indexing` counts the documents it may read, the same whatever it asks — where a caller
// no rule restricts is told the whole build's counts.
import { randomBytes } from 'node:crypto';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Provider } from '../../src/core/types.js';
import type { HttpEndpoint } from '../../src/http/app.js';
import { filesProvider } from '../../src/providers/files/index.js';
import type { Reservoir } from '../../src/server/index.js';
import { dirUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { closeClient, connectWithToken, makeToken } from '../security/harness.js';
import { backends, dropBackends } from './backends.js';
import { serveSearch } from './served.js';

const ID = randomBytes(6).toString('hex');
const docs = makeToken('docs-bot', ['docs']);
const admin = makeToken('admin', ['admin']);

const BACKENDS = backends();
afterAll(() => dropBackends(BACKENDS));

describe.each(BACKENDS)('on $name', (backend) => {
  let root: string;
  let state: string;
  let reservoir: Reservoir;
  let endpoint: HttpEndpoint;
  let release: () => void;
  let reached: Promise<void>;

  beforeAll(async () => {
    root = makeTempDir('reservoir-progress-');
    state = makeTempDir('reservoir-search-state-');
    const secrets: Record<string, string> = {};
    for (let i = 0; i < 30; i += 1) secrets[`secrets/s${i}.md`] = `hushword${ID} ${i}\n`;
    writeTree(root, { 'docs/a.md': 'the walrus\n', ...secrets, 'zz/held.md': 'held back\n' });
    const released = new Promise<void>((resolve) => (release = resolve));
    let arrived!: () => void;
    reached = new Promise<void>((resolve) => (arrived = resolve));
    // The indexer's read of zz/held.md waits for the test: the first build stays running until then.
    const hold = (provider: Provider): Provider =>
      new Proxy(provider, {
        get(target, key) {
          if (key === 'read') {
            return async (uri: string, ctx: Parameters<Provider['read']>[1]) => {
              if (uri.endsWith('/zz/held.md')) {
                arrived();
                await released;
              }
              return target.read(uri, ctx);
            };
          }
          const value = Reflect.get(target, key, target) as unknown;
          return typeof value === 'function'
            ? (value as (...args: unknown[]) => unknown).bind(target)
            : value;
        },
      });
    ({ reservoir, endpoint } = await serveSearch({
      providers: [hold(filesProvider({ root }))],
      rules: [
        { scopes: ['docs'], allow: [`${dirUri(root)}docs/**`, 'tool:*'] },
        { scopes: ['admin'], allow: ['file:///**', 'tool:*'] },
      ],
      tokens: [docs, admin],
      stateDir: state,
      backend,
      firstBuildWaitMs: 50,
    }));
    void reservoir.search!.open();
    await reached;
  });

  afterAll(async () => {
    release?.();
    await reservoir?.close();
    removeTree(root);
    removeTree(state);
  });

  describe('search while the first build runs', () => {
    let scoped: Client;
    let full: Client;

    beforeAll(async () => {
      scoped = await connectWithToken('2026', endpoint.url, docs.token);
      full = await connectWithToken('2025', endpoint.url, admin.token);
    });

    afterAll(async () => {
      await closeClient(scoped);
      await closeClient(full);
    });

    const call = async (
      client: Client,
      query: string,
    ): Promise<{
      progress: { progress: number; total?: number | undefined; message?: string | undefined }[];
      indexing: unknown;
    }> => {
      const progress: {
        progress: number;
        total?: number | undefined;
        message?: string | undefined;
      }[] = [];
      const result = (await client.callTool(
        { name: 'search_resources', arguments: { query } },
        { onprogress: (p) => void progress.push(p) },
      )) as CallToolResult;
      expect(result.isError ?? false).toBe(false);
      return { progress, indexing: (result.structuredContent as { indexing?: unknown }).indexing };
    };

    it('tells a restricted caller only that the build runs, and counts only what it may see', async () => {
      const hushed = await call(scoped, `hushword${ID}`);
      const unknown = await call(scoped, `nowhere${ID}`);
      expect(hushed).toEqual(unknown);
      expect(hushed.progress.length).toBeGreaterThan(0);
      for (const p of hushed.progress) expect(p).toEqual({ progress: 0, message: 'indexing' });
      const { done, total } = hushed.indexing as { done: number; total: number };
      expect(done).toBe(total);
      expect(done).toBeLessThanOrEqual(1);
    });

    it("tells a caller no rule restricts the whole build's counts", async () => {
      const answer = await call(full, 'walrus');
      expect((answer.indexing as { total: number }).total).toBeGreaterThanOrEqual(32);
      expect(answer.progress.some((p) => p.total !== undefined && p.total >= 32)).toBe(true);
    });
  });
});
