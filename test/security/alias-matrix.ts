/**
 * The alias matrix of issue 11, item 1, shared by alias-matrix-2025.test.ts and
 * alias-matrix-2026.test.ts (see either for what it proves).
 */
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseUri } from '../../src/core/uri.js';
import { createAuthenticator } from '../../src/http/auth.js';
import type { HttpEndpoint } from '../../src/http/app.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { builtinTools } from '../../src/tools/index.js';
import { listAllPages, type Era } from '../helpers/clients.js';
import {
  aliasPolicy,
  makeFixture,
  PUBLIC,
  RULE_STYLES,
  SECRET,
  SOURCES,
  type Aliased,
  type Fixture,
} from './aliases.js';
import {
  AuthedLegacySession,
  closeClient,
  connectWithToken,
  makeToken,
  settle,
  WireLog,
  type Token,
} from './harness.js';

const admin = makeToken('admin', ['admin']);
const restricted: Token[] = [
  ...RULE_STYLES.map((style) => makeToken(`deny-${style}`, [style])),
  makeToken('allow-exact', ['exact-allow']),
];

let fixture: Fixture;
let reservoir: Reservoir;
let endpoint: HttpEndpoint;
const log = new WireLog();

function text(contents: readonly unknown[]): string {
  return contents
    .map(
      (c) =>
        ((c as { text?: string }).text ?? '') +
        ((c as { resource?: { text?: string } }).resource?.text ?? ''),
    )
    .join('');
}

function toolText(result: { content?: unknown }): string {
  return ((result.content ?? []) as { text?: string; resource?: { text?: string } }[])
    .map((c) => (c.text ?? '') + (c.resource?.text ?? ''))
    .join('\n');
}

/** The spellings of a public resource `token` may read: all, but for the exact-allow token not other git refs. */
function granted(token: Token, resource: Aliased): string[] {
  return token.name === 'allow-exact'
    ? resource.spellings.filter((u) => !resource.versions.includes(u))
    : resource.spellings;
}

/** Distinct normalised forms of `uris`, in order (what a listen acknowledgement holds). */
function normalised(uris: readonly string[]): string[] {
  return [...new Set(uris.map((u) => parseUri(u).href))];
}

type Route = (client: Client, uri: string) => Promise<{ ok: boolean; text: string }>;

/** Every route that reads a resource by a client-supplied URI. */
const routes: Record<string, Route> = {
  'resources/read': async (client, uri) => {
    const outcome = await settle(client.readResource({ uri }));
    return outcome.ok
      ? { ok: true, text: text(outcome.value.contents) }
      : { ok: false, text: String((outcome.error as Error).message) };
  },
  'the read_resource tool': async (client, uri) => {
    const result = await client.callTool({ name: 'read_resource', arguments: { uri } });
    return { ok: result.isError !== true, text: toolText(result) };
  },
  'a prompt embedding': async (client, uri) => {
    const outcome = await settle(client.getPrompt({ name: 'embed', arguments: { uri } }));
    return outcome.ok
      ? { ok: true, text: text(outcome.value.messages.map((m) => m.content)) }
      : { ok: false, text: String((outcome.error as Error).message) };
  },
};

/**
 * Registers the whole matrix for one era in the calling test file: its own fixture and server, every
 * route over every spelling, and that era's subscription route (2025 resources/subscribe, 2026
 * subscriptions/listen). One file per era, so two workers share the matrix.
 */
export function aliasMatrix(era: Era): void {
  beforeAll(async () => {
    fixture = await makeFixture();
    reservoir = createReservoir({
      providers: fixture.providers,
      prompts: fixture.prompts,
      access: aliasPolicy(fixture),
      pageSize: 3,
    });
    for (const tool of builtinTools(reservoir.registry)) reservoir.tools.add(tool);
    endpoint = await reservoir.listen({
      host: '127.0.0.1',
      port: 0,
      auth: createAuthenticator({
        tokens: [admin, ...restricted].map(({ name, sha256, scopes }) => ({
          name,
          sha256,
          scopes,
        })),
      }),
    });
  });

  afterAll(async () => {
    await reservoir?.close();
    await fixture?.close();
  });

  describe(`every spelling of a resource, through every route (${era} era)`, () => {
    let adminClient: Client;
    const clients = new Map<string, Client>();

    beforeAll(async () => {
      adminClient = await connectWithToken(era, endpoint.url, admin.token);
      for (const token of restricted)
        clients.set(token.name, await connectWithToken(era, endpoint.url, token.token, log));
    });
    afterAll(async () => {
      await closeClient(adminClient);
      for (const client of clients.values()) await closeClient(client);
    });

    describe.each(Object.keys(routes))('%s', (routeName) => {
      const route = routes[routeName]!;

      it.each(SOURCES)(
        'hands the admin the %s secret under every spelling (each is a real alias)',
        async (source) => {
          for (const uri of fixture.secrets[source].spellings) {
            const outcome = await route(adminClient, uri);
            expect(outcome.ok, `${uri}: ${outcome.text}`).toBe(true);
            expect(outcome.text, uri).toContain(SECRET);
          }
        },
      );

      it.each(SOURCES)(
        'answers every restricted token, for every spelling of the %s secret, as for a missing resource',
        async (source) => {
          const missing = await route(
            clients.get(restricted[0]!.name)!,
            fixture.secrets[source].canonical.replace(/plan|users|42/, 'no-such'),
          );
          expect(missing.ok).toBe(false);
          for (const token of restricted) {
            const client = clients.get(token.name)!;
            for (const uri of fixture.secrets[source].spellings) {
              const outcome = await route(client, uri);
              expect(outcome.ok, `${token.name} ${uri}: ${outcome.text.slice(0, 200)}`).toBe(false);
              expect(outcome.text, `${token.name} ${uri}`).not.toContain(SECRET);
              expect(outcome.text, `${token.name} ${uri}`).toMatch(/not found|No resource at/i);
            }
          }
        },
      );

      it.each(SOURCES)(
        'gives every spelling of the public %s resource the answer the resource gets, to every token',
        async (source) => {
          for (const token of restricted) {
            const client = clients.get(token.name)!;
            for (const uri of granted(token, fixture.publics[source])) {
              const outcome = await route(client, uri);
              expect(outcome.ok, `${token.name} ${uri}: ${outcome.text.slice(0, 200)}`).toBe(true);
              expect(outcome.text, `${token.name} ${uri}`).toContain(PUBLIC);
            }
          }
        },
      );

      it('refuses a token allowed only the listed git ref the same file at other refs (a ref is a version rules name)', async () => {
        const client = clients.get('allow-exact')!;
        expect(fixture.publics.git.versions.length).toBeGreaterThan(3);
        for (const uri of fixture.publics.git.versions) {
          expect((await route(adminClient, uri)).ok, uri).toBe(true);
          const outcome = await route(client, uri);
          expect(outcome.ok, uri).toBe(false);
          expect(outcome.text, uri).toMatch(/not found|No resource at/i);
        }
      });
    });

    it('refuses the directory holding the files secret, in every spelling, under a directory rule only', async () => {
      for (const uri of fixture.secretDirectory) {
        expect((await routes['resources/read']!(adminClient, uri)).ok, uri).toBe(true);
        const directory = await routes['resources/read']!(clients.get('deny-directory')!, uri);
        expect(directory.ok, uri).toBe(false);
        // Under a rule for the file alone the directory reads, without naming the file.
        const exact = await routes['resources/read']!(clients.get('deny-exact')!, uri);
        expect(exact.ok, uri).toBe(true);
        expect(exact.text, uri).not.toContain('plan.txt');
      }
    });

    it('lists no secret, in resources/list, list_resources or find_resources, for any restricted token', async () => {
      const secretUris = SOURCES.map((s) => fixture.secrets[s].canonical);
      const adminListed = (await listAllPages(adminClient)).flatMap((p) =>
        p.resources.map((r) => r.uri),
      );
      expect(adminListed).toEqual(
        expect.arrayContaining(secretUris.filter((u) => !u.startsWith('api://'))),
      );
      for (const token of restricted) {
        const client = clients.get(token.name)!;
        const listed = (await listAllPages(client)).flatMap((p) => p.resources.map((r) => r.uri));
        expect(
          listed.filter((u) => secretUris.includes(u)),
          token.name,
        ).toEqual([]);
        expect(listed.length, token.name).toBeGreaterThan(0);
        let cursor: string | undefined;
        const tool: string[] = [];
        do {
          const result = await client.callTool({
            name: 'list_resources',
            arguments: { limit: 3, ...(cursor === undefined ? {} : { cursor }) },
          });
          const structured = result.structuredContent as {
            resources: { uri: string }[];
            nextCursor?: string;
          };
          tool.push(...structured.resources.map((r) => r.uri));
          cursor = structured.nextCursor;
        } while (cursor !== undefined);
        expect(tool.sort(), token.name).toEqual([...listed].sort());
        for (const args of [
          { name: '**/*' },
          { name: 'plan*' },
          { name: 'users' },
          { under: 'git://repo/main/secret/' },
        ]) {
          const result = await client.callTool({ name: 'find_resources', arguments: args });
          expect(toolText(result), `${token.name} ${JSON.stringify(args)}`).not.toMatch(
            /plan\.txt|tables\/users/,
          );
        }
      }
    });

    it('completes no name of a secret for any restricted token, at any ref', async () => {
      for (const probe of fixture.completions) {
        const ask = (client: Client): Promise<{ completion: { values: string[] } }> =>
          client.complete({
            ref: { type: 'ref/resource', uri: probe.template },
            argument: { name: probe.argument, value: probe.value },
            ...(probe.context === undefined ? {} : { context: { arguments: probe.context } }),
          });
        expect((await ask(adminClient)).completion.values, JSON.stringify(probe)).toContain(
          probe.secretValue,
        );
        for (const token of restricted) {
          const answer = await settle(ask(clients.get(token.name)!));
          if (!answer.ok) continue; // the template itself hidden from this token: nothing offered
          expect(
            answer.value.completion.values,
            `${token.name} ${JSON.stringify(probe)}`,
          ).not.toContain(probe.secretValue);
        }
      }
    });

    it('never sent a restricted token a byte of any secret', async () => {
      await log.settle();
      const leaks = log.exchanges
        .filter((e) => e.response.includes(SECRET))
        .map((e) => `${e.request.slice(0, 200)} → ${e.response.slice(0, 200)}`);
      expect(leaks).toEqual([]);
      expect(log.exchanges.length).toBeGreaterThan(100);
    });
  });

  describe('subscriptions to every spelling of a secret', () => {
    if (era === '2025')
      it.each(SOURCES)(
        '2025 resources/subscribe: the admin may watch every spelling of the %s secret, no restricted token any',
        async (source) => {
          const spellings = fixture.secrets[source].spellings;
          const adminSession = await AuthedLegacySession.open(endpoint.url, admin.token);
          try {
            for (const uri of spellings) {
              const { message } = await adminSession.request('resources/subscribe', { uri });
              expect(message?.result, `${uri}: ${JSON.stringify(message?.error)}`).toEqual({});
            }
          } finally {
            await adminSession.close();
          }
          for (const token of restricted) {
            const session = await AuthedLegacySession.open(endpoint.url, token.token, log);
            try {
              for (const uri of spellings) {
                const { message } = await session.request('resources/subscribe', { uri });
                expect(message?.error?.code, `${token.name} ${uri}`).toBe(-32002);
                expect(
                  Object.keys((message?.error?.data ?? {}) as object),
                  `${token.name} ${uri}`,
                ).toEqual(['uri']);
              }
              for (const uri of granted(token, fixture.publics[source])) {
                const { message } = await session.request('resources/subscribe', { uri });
                expect(
                  message?.result,
                  `${token.name} ${uri}: ${JSON.stringify(message?.error)}`,
                ).toEqual({});
              }
            } finally {
              await session.close();
            }
          }
        },
      );
    else
      it.each(SOURCES)(
        '2026 subscriptions/listen honours every spelling of the %s secret for the admin and none for a restricted token',
        async (source) => {
          const spellings = fixture.secrets[source].spellings;
          const publicSpellings = fixture.publics[source].spellings;
          const adminClient = await connectWithToken('2026', endpoint.url, admin.token);
          try {
            const subscription = await adminClient.listen({ resourceSubscriptions: spellings });
            try {
              expect(subscription.honoredFilter.resourceSubscriptions).toEqual(
                normalised(spellings),
              );
            } finally {
              await subscription.close();
            }
          } finally {
            await closeClient(adminClient);
          }
          for (const token of restricted) {
            const client = await connectWithToken('2026', endpoint.url, token.token, log);
            try {
              const subscription = await client.listen({
                resourceSubscriptions: [...spellings, ...publicSpellings],
              });
              try {
                expect(subscription.honoredFilter.resourceSubscriptions, token.name).toEqual(
                  normalised(granted(token, fixture.publics[source])),
                );
              } finally {
                await subscription.close();
              }
            } finally {
              await closeClient(client);
            }
          }
        },
      );
  });
}
