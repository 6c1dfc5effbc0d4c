/**
 * The set-up the search access tests share: a Reservoir over `providers` with search on `backend`,
 * the built-in tools (search included), access `rules`, and an HTTP endpoint on a free port that
 * knows `tokens`. Each test keeps its own tree, rules and clients; this is only the wiring.
 */
import { AccessPolicy, type AccessRule } from '../../src/core/access.js';
import type { Provider } from '../../src/core/types.js';
import { createAuthenticator } from '../../src/http/auth.js';
import type { HttpEndpoint } from '../../src/http/app.js';
import type { LazySearch } from '../../src/search/lazy.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { builtinTools } from '../../src/tools/index.js';
import type { Token } from '../security/harness.js';
import type { Backend } from './backends.js';

export interface SearchServerOptions {
  providers: Provider[];
  rules: AccessRule[];
  tokens: Token[];
  stateDir: string;
  backend: Backend;
  /** How long the search tool waits for a first build before answering with progress, ms. */
  firstBuildWaitMs?: number;
}

export interface SearchServer {
  reservoir: Reservoir;
  endpoint: HttpEndpoint;
  search: LazySearch;
}

/** Builds and starts the server; the index is not opened (call `search.open()`). */
export async function serveSearch(options: SearchServerOptions): Promise<SearchServer> {
  const reservoir = createReservoir({
    providers: options.providers,
    access: new AccessPolicy({ rules: options.rules }),
    search: { stateDir: options.stateDir, postgres: options.backend.postgres },
  });
  const search = reservoir.search!;
  const open = () => search.open();
  const tool =
    options.firstBuildWaitMs === undefined
      ? { open }
      : { open, firstBuildWaitMs: options.firstBuildWaitMs };
  for (const each of builtinTools(reservoir.registry, { search: tool })) reservoir.tools.add(each);
  const endpoint = await reservoir.listen({
    host: '127.0.0.1',
    port: 0,
    auth: createAuthenticator({
      tokens: options.tokens.map(({ name, sha256, scopes }) => ({ name, sha256, scopes })),
    }),
  });
  return { reservoir, endpoint, search };
}
