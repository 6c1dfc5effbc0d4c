// Pins access control (src/core/access-control.ts), the one module that decides access: a client URI
// is judged by the resource it names (its provider's canonical form) as well as its spelling; roots,
// templates, prompts and tools are shown by the rules; subscriptions follow where a URI leads; search
// candidates need read and list; the local user and a server without rules see everything; a reload
// of the rules takes effect at once.
import { describe, expect, it } from 'vitest';
import { AccessPolicy, type AccessRule } from '../../src/core/access.js';
import { NotFoundError } from '../../src/core/errors.js';
import { LOCAL_PRINCIPAL, type Principal } from '../../src/core/principal.js';
import { Registry } from '../../src/core/registry.js';
import type { CallContext } from '../../src/core/types.js';
import { memoryProvider } from './fakes.js';

const alice: Principal = { id: 'alice', kind: 'token', scopes: [] };
const signal = new AbortController().signal;

/** `mem://docs/` whose names may be spelled with a trailing `/` (folded by `canonical`), and whose `link` leads to `secret/key`. */
function served(rules: AccessRule[]): Registry {
  const docs = memoryProvider({ root: 'mem://docs/', names: ['readme', 'secret/key', 'link'] });
  const registry = new Registry({ access: new AccessPolicy({ rules }) });
  registry.mount({
    ...docs,
    canonical: (uri: string) => {
      const name = uri.slice('mem://docs/'.length).replace(/\/$/, '');
      if (!['readme', 'secret/key', 'link'].includes(name)) throw new NotFoundError(uri);
      return `mem://docs/${name}`;
    },
    reachable: (uri: string, ctx: CallContext) =>
      !uri.endsWith('/link') || ctx.allows?.('read', 'mem://docs/secret/key') !== false,
  });
  registry.mount(memoryProvider({ root: 'mem://other/', names: ['a'] }));
  return registry;
}

const docsOnly: AccessRule[] = [
  {
    principals: ['token:alice'],
    allow: ['mem://docs/**', 'tool:search', 'prompt:summary'],
    deny: ['mem://docs/secret/**'],
  },
];

describe('AccessControl', () => {
  it('judges a client URI by the resource it names, whatever the spelling', async () => {
    const { access } = served(docsOnly);
    expect(await access.admits(alice, 'read', 'mem://docs/readme')).toBe(true);
    expect(await access.admits(alice, 'read', 'mem://docs/readme/')).toBe(true);
    expect(await access.admits(alice, 'read', 'mem://docs/secret/key')).toBe(false);
    expect(await access.admits(alice, 'read', 'mem://docs/secret/key/')).toBe(false);
    // Missing, or owned by no provider: refused like a denied one.
    expect(await access.admits(alice, 'read', 'mem://docs/missing')).toBe(false);
    expect(await access.admits(alice, 'read', 'mem://nowhere/x')).toBe(false);
    expect(await access.admits(alice, 'read', 'mem://other/a')).toBe(false);
  });

  it('lets the local user and a server without rules reach everything served', async () => {
    const { access } = served(docsOnly);
    expect(await access.admits(LOCAL_PRINCIPAL, 'read', 'mem://docs/secret/key')).toBe(true);
    const open = new Registry().mount(memoryProvider({ root: 'mem://docs/', names: ['a'] }));
    expect(open.restricted).toBe(false);
    expect(await open.access.admits(alice, 'read', 'mem://docs/a')).toBe(true);
    expect(open.access.mayUse(alice, 'tools', 'anything')).toBe(true);
  });

  it('shows roots, templates, prompts and tools by the rules', () => {
    const { access } = served(docsOnly);
    expect(access.visibleRoots(alice)).toEqual(['mem://docs/']);
    expect(access.visibleRoots(LOCAL_PRINCIPAL)).toEqual(['mem://docs/', 'mem://other/']);
    expect(access.templateVisible(alice, { uriTemplate: 'mem://docs/{name}', name: 'docs' })).toBe(
      true,
    );
    expect(
      access.templateVisible(alice, { uriTemplate: 'mem://other/{name}', name: 'other' }),
    ).toBe(false);
    expect(
      access.usable(alice, 'tools', [{ name: 'search' }, { name: 'drop' }]).map((t) => t.name),
    ).toEqual(['search']);
    expect(access.mayUse(alice, 'prompts', 'summary')).toBe(true);
    expect(access.mayUse(alice, 'prompts', 'search')).toBe(false);
  });

  it('refuses a subscription to a URI that leads somewhere denied', async () => {
    const { access } = served(docsOnly);
    expect(await access.subscribable(alice, 'mem://docs/readme')).toBe(true);
    expect(await access.subscribable(alice, 'mem://docs/link')).toBe(false);
    expect(await access.subscribable(LOCAL_PRINCIPAL, 'mem://docs/link')).toBe(true);
  });

  it('shows a search candidate only when it may be read and listed', async () => {
    const { access } = served([
      { principals: ['token:alice'], allow: ['mem://docs/**'] },
      { principals: ['token:alice'], operations: ['list'], deny: ['mem://docs/readme'] },
    ]);
    expect(
      await access.admits(alice, 'read', 'mem://docs/readme', { signal, principal: alice }),
    ).toBe(true);
    expect(await access.findable(alice, 'mem://docs/readme')).toBe(false);
    expect(await access.findable(alice, 'mem://docs/link')).toBe(true);
  });

  it('follows a reload of the rules at once', async () => {
    const registry = served(docsOnly);
    registry.setAccess(
      new AccessPolicy({ rules: [{ principals: ['token:alice'], allow: ['mem://**'] }] }),
    );
    expect(await registry.access.admits(alice, 'read', 'mem://docs/secret/key')).toBe(true);
    expect(registry.access.visibleRoots(alice)).toEqual(['mem://docs/', 'mem://other/']);
    registry.setAccess(undefined);
    expect(registry.restricted).toBe(false);
  });
});
