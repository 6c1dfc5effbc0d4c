// Access rules decide per principal, operation and normalised URI; deny wins; the local principal
// is exempt; and the registry applies them on every route, answering a denied resource like a
// missing one and binding cursors to the principal that received them.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessPolicy } from '../../src/core/access.js';
import { InvalidCursorError, NotFoundError } from '../../src/core/errors.js';
import { LOCAL_PRINCIPAL, type Principal } from '../../src/core/principal.js';
import { Registry } from '../../src/core/registry.js';
import { sdkTemplateEngine } from '../../src/mcp/templates.js';
import { filesProvider } from '../../src/providers/files/index.js';

const docsReader: Principal = { id: 'docs-bot', kind: 'token', scopes: ['docs'] };
const admin: Principal = { id: 'admin', kind: 'oauth', scopes: ['all'] };
const stranger: Principal = { id: 'stranger', kind: 'token', scopes: [] };

describe('AccessPolicy', () => {
  const policy = new AccessPolicy({
    rules: [
      {
        scopes: ['docs'],
        allow: ['file:///srv/docs/**', 'tool:read_*', 'prompt:summarise'],
        deny: ['file:///srv/docs/private/**'],
      },
      { principals: ['oauth:admin'], allow: ['**'] },
      { principals: ['*'], operations: ['subscribe'], deny: ['file:///srv/docs/noisy.log'] },
    ],
  });

  it('allows what an applicable rule allows and refuses what no rule grants', () => {
    expect(policy.allows(docsReader, 'read', 'file:///srv/docs/a.md')).toBe(true);
    expect(policy.allows(docsReader, 'read', 'file:///srv/secrets/key')).toBe(false);
    expect(policy.allows(stranger, 'read', 'file:///srv/docs/a.md')).toBe(false);
  });

  it('lets a deny win over an allow of the same principal', () => {
    expect(policy.allows(docsReader, 'read', 'file:///srv/docs/private/plan.md')).toBe(false);
    expect(policy.allows(admin, 'subscribe', 'file:///srv/docs/noisy.log')).toBe(false);
    expect(policy.allows(admin, 'read', 'file:///srv/docs/noisy.log')).toBe(true);
  });

  it('does not let a sibling directory sharing the name prefix through', () => {
    expect(policy.allows(docsReader, 'read', 'file:///srv/docs-secret/a.md')).toBe(false);
  });

  it('exempts the local principal, and an absent one, from rules', () => {
    expect(policy.allows(LOCAL_PRINCIPAL, 'read', 'file:///srv/secrets/key')).toBe(true);
    expect(policy.allows(undefined, 'read', 'file:///srv/secrets/key')).toBe(true);
  });

  it('names prompts and tools as prompt:NAME and tool:NAME', () => {
    expect(policy.allows(docsReader, 'tools', 'tool:read_resource')).toBe(true);
    expect(policy.allows(docsReader, 'tools', 'tool:sql_query')).toBe(false);
    expect(policy.allows(docsReader, 'prompts', 'prompt:summarise')).toBe(true);
  });

  it('says whether anything under a prefix is reachable, for templates and directories', () => {
    expect(policy.mayReachUnder(docsReader, 'read', 'file:///srv/')).toBe(true);
    expect(policy.mayReachUnder(docsReader, 'read', 'file:///srv/docs/sub/')).toBe(true);
    expect(policy.mayReachUnder(docsReader, 'read', 'file:///srv/secrets/')).toBe(false);
    expect(policy.mayReachUnder(docsReader, 'read', 'file:///srv/docs/private/x/')).toBe(false);
    expect(policy.mayReachUnder(stranger, 'read', 'file:///srv/')).toBe(false);
  });

  it('says whether everything under a root is readable, for a tool that can read any of it: no deny could match there and an allow covers it all', () => {
    const tables = new AccessPolicy({
      rules: [
        { principals: ['token:full'], allow: ['db://app/**', 'db://other/**'] },
        {
          principals: ['token:lim'],
          allow: ['db://app/**'],
          deny: ['db://app/tables/salaries/**'],
        },
        { principals: ['token:narrow'], allow: ['db://app/tables/pub/**'] },
        { principals: ['token:globbed'], allow: ['db://**'], deny: ['db://*/tables/secret*/**'] },
        { principals: ['token:schemes'], allow: ['db://**'] },
        { principals: ['token:empty'], allow: ['db://app/{,x}/**', 'db://{app,other}/**'] },
        { principals: ['token:elsewhere'], allow: ['db://app/**'], deny: ['db://other/**'] },
        { principals: ['token:listing'], allow: ['db://app/**'] },
        {
          principals: ['token:listing'],
          deny: ['db://app/tables/salaries/**'],
          operations: ['list'],
        },
        {
          principals: ['token:spelled'],
          allow: ['db://app/**'],
          deny: ['db://app/tables/caf%C3%A9/**'],
        },
      ],
    });
    const token = (id: string): Principal => ({ id, kind: 'token', scopes: [] });
    const all = (id: string, root = 'db://app/'): boolean =>
      tables.mayReachAllUnder(token(id), 'read', root);
    expect(all('full')).toBe(true);
    expect(all('full', 'db://other/')).toBe(true);
    // One table denied: not everything is readable.
    expect(all('lim')).toBe(false);
    // Only part of the root allowed, under the default deny.
    expect(all('narrow')).toBe(false);
    // A deny whose literal part ends before the root, with a glob after, may match under it.
    expect(all('globbed')).toBe(false);
    // An allow of every root of the scheme covers each.
    expect(all('schemes')).toBe(true);
    // An allow with a glob before its /** matches the root itself but promises nothing below it.
    expect(all('empty')).toBe(false);
    // A deny under another root does not count.
    expect(all('elsewhere')).toBe(true);
    expect(all('elsewhere', 'db://other/')).toBe(false);
    // A deny of another operation does not count for reads.
    expect(all('listing')).toBe(true);
    expect(all('spelled')).toBe(false);
    expect(all('stranger')).toBe(false);
    expect(tables.mayReachAllUnder(LOCAL_PRINCIPAL, 'read', 'db://app/')).toBe(true);
    const open = new AccessPolicy({
      rules: [{ scopes: ['x'], deny: ['db://app/tables/t/**'] }],
      default: 'allow',
    });
    expect(open.mayReachAllUnder(stranger, 'read', 'db://app/')).toBe(true);
    expect(open.mayReachAllUnder({ ...stranger, scopes: ['x'] }, 'read', 'db://app/')).toBe(false);
  });

  it('uses the default when no rule matches', () => {
    const open = new AccessPolicy({
      rules: [{ scopes: ['x'], deny: ['file:///srv/secrets/**'] }],
      default: 'allow',
    });
    expect(open.allows(stranger, 'read', 'file:///srv/docs/a.md')).toBe(true);
    expect(open.allows({ ...stranger, scopes: ['x'] }, 'read', 'file:///srv/secrets/k')).toBe(
      false,
    );
  });

  it('shows a principal only the rules that name its own kind, as it applies them (rulesFor)', () => {
    const mixed = new AccessPolicy({
      rules: [
        { principals: ['token:alice'], allow: ['file:///srv/token/**'] },
        { principals: ['oauth:alice'], allow: ['file:///srv/oauth/**'] },
        { principals: ['oauth:*'], deny: ['file:///srv/oauth/secret/**'] },
      ],
    });
    const tokenAlice: Principal = { id: 'alice', kind: 'token', scopes: [] };
    const oauthAlice: Principal = { id: 'alice', kind: 'oauth', scopes: [] };
    expect(mixed.rulesFor(tokenAlice).rules).toEqual([
      { principals: ['token:alice'], allow: ['file:///srv/token/**'] },
    ]);
    expect(mixed.rulesFor(oauthAlice).rules.map((r) => r.principals)).toEqual([
      ['oauth:alice'],
      ['oauth:*'],
    ]);
    expect(mixed.allows(tokenAlice, 'read', 'file:///srv/oauth/a.md')).toBe(false);
    expect(mixed.allows(oauthAlice, 'read', 'file:///srv/oauth/a.md')).toBe(true);
  });
});

describe('Registry with access rules', () => {
  let root: string;
  let registry: Registry;
  let base: string;
  const ctx = (principal?: Principal) => ({
    signal: new AbortController().signal,
    ...(principal === undefined ? {} : { principal }),
  });

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'reservoir-access-'));
    mkdirSync(join(root, 'docs', 'private'), { recursive: true });
    mkdirSync(join(root, 'secrets'));
    for (let i = 0; i < 5; i += 1) writeFileSync(join(root, 'docs', `d${i}.md`), `doc ${i}`);
    writeFileSync(join(root, 'docs', 'private', 'plan.md'), 'plan');
    writeFileSync(join(root, 'secrets', 'key.txt'), 'hunter2');
    base = `${pathToFileURL(root).href}/`;
    registry = new Registry({
      templateEngine: sdkTemplateEngine,
      access: new AccessPolicy({
        rules: [{ scopes: ['docs'], allow: [`${base}docs/**`], deny: [`${base}docs/private/**`] }],
      }),
    }).mount(filesProvider({ root }));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('lists only what the principal may list, across pages', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await registry.listResources(cursor, ctx(docsReader), { limit: 2 });
      seen.push(...page.items.map((i) => i.title ?? ''));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(seen.sort()).toEqual([
      'docs/d0.md',
      'docs/d1.md',
      'docs/d2.md',
      'docs/d3.md',
      'docs/d4.md',
    ]);
  });

  it('answers a denied read exactly like a missing file, whatever the spelling', async () => {
    for (const uri of [
      `${base}secrets/key.txt`,
      `${base}docs/private/plan.md`,
      `${base}%73ecrets/key.txt`,
      `${base}docs/../secrets/key.txt`,
    ]) {
      const error = await registry.read(uri, ctx(docsReader)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(NotFoundError);
      expect((error as NotFoundError).message).toBe(`Resource not found: ${uri}`);
    }
    await expect(registry.read(`${base}docs/d0.md`, ctx(docsReader))).resolves.toMatchObject({
      contents: [{ text: 'doc 0' }],
    });
  });

  it('refuses a template read of a denied path', async () => {
    await expect(
      registry.read(`${base}secrets/key.txt?lines=1-1`, ctx(docsReader)),
    ).rejects.toBeInstanceOf(NotFoundError);
  });

  it('never completes to a denied path', async () => {
    const template = `${base}{+path}`;
    const top = await registry.completeTemplate(template, 'path', '', {}, ctx(docsReader));
    expect(top.values).toEqual(['docs/']);
    const inside = await registry.completeTemplate(template, 'path', 'docs/', {}, ctx(docsReader));
    expect(inside.values).not.toContain('docs/private/');
    expect(inside.values).toContain('docs/d0.md');
  });

  it('refuses a cursor minted for another principal', async () => {
    const page = await registry.listResources(undefined, ctx(docsReader), { limit: 1 });
    await expect(
      registry.listResources(page.nextCursor, ctx({ ...docsReader, id: 'someone-else' }), {
        limit: 1,
      }),
    ).rejects.toBeInstanceOf(InvalidCursorError);
  });

  it('refuses a cursor of a token to an OAuth subject that has the same id', async () => {
    const page = await registry.listResources(undefined, ctx(docsReader), { limit: 1 });
    const sameIdOtherKind: Principal = { ...docsReader, kind: 'oauth' };
    await expect(
      registry.listResources(page.nextCursor, ctx(sameIdOtherKind), { limit: 1 }),
    ).rejects.toBeInstanceOf(InvalidCursorError);
  });

  it('shows a stranger nothing at all', async () => {
    expect((await registry.listResources(undefined, ctx(stranger))).items).toEqual([]);
    expect(registry.listTemplates(undefined, { principal: stranger }).items).toEqual([]);
    await expect(registry.read(`${base}docs/d0.md`, ctx(stranger))).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });
});
