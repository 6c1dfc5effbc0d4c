/**
 * Access rules on skills, through the real SDK client over HTTP in both eras: a skill whose
 * SKILL.md a principal may not read is not in its skills/list and is answered like a missing one
 * everywhere (skills/get, resources/read, directory reads, subscriptions); a denied file is
 * refused like a missing one and left out of its folder's directory read; a plain files directory
 * read names no child the principal may not see; skills/list and skills/get name no file the
 * principal may not read (no URI, digest or size), and who_am_i names only the caller.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Client } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { AccessPolicy } from '../../src/core/access.js';
import { createAuthenticator } from '../../src/http/auth.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { buildSkills } from '../../src/server/skills.js';
import { ERAS } from '../helpers/clients.js';
import { closeClient, connectWithToken, makeToken, settle } from '../security/harness.js';
import { skillsFolder } from './fixtures.js';

const DirectoryResult = z.looseObject({
  resources: z.array(z.looseObject({ uri: z.string(), name: z.string() })),
});
const team = makeToken('team', ['team']);
/** The denied file's digest as skills/list would publish it. */
const DENIED_DIGEST = createHash('sha256')
  .update(Buffer.from('\ufeff# Examples with a byte order mark\n'))
  .digest('hex');
let reservoir: Reservoir;
let url: string;
let docsRoot: string;
const clients: Client[] = [];

beforeAll(async () => {
  docsRoot = skillsFolder({ 'guide.md': '# guide\n' }); // the folder `secret` beside it is denied
  mkdirSync(join(docsRoot, 'secret'));
  writeFileSync(join(docsRoot, 'secret/keys.txt'), 'k\n');
  const docs = pathToFileURL(docsRoot).href + '/';
  const skills = await buildSkills([
    { source: { type: 'files', root: skillsFolder() }, origin: 'test' },
  ]);
  reservoir = createReservoir({
    providers: [filesProvider({ root: docsRoot })],
    ...(skills === undefined ? {} : { skills }),
    access: new AccessPolicy({
      rules: [
        {
          scopes: ['team'],
          allow: ['skill://**', `${docs}**`],
          deny: ['skill://pdf-forms/**', 'skill://commit-style/EXAMPLES.md', `${docs}secret/**`],
        },
      ],
    }),
  });
  const listening = await reservoir.listen({
    host: '127.0.0.1',
    port: 0,
    auth: createAuthenticator({
      tokens: [{ name: team.name, sha256: team.sha256, scopes: team.scopes }],
    }),
  });
  url = listening.url;
});

afterAll(async () => {
  for (const client of clients) await closeClient(client);
  await reservoir.close();
});

async function connect(era: (typeof ERAS)[number]): Promise<Client> {
  const client = await connectWithToken(era, url, team.token);
  clients.push(client);
  return client;
}

describe.each(ERAS)('skills under access rules, %s era', (era) => {
  it('leaves a skill the principal may not read out of skills/list', async () => {
    const listing = await new SkillsClient(await connect(era)).list();
    expect(listing.skills.map((s) => s.uri)).toEqual(['skill://commit-style/SKILL.md']);
  });

  it('publishes no URI, digest or size of a file the principal may not read, in skills/list or skills/get', async () => {
    const skills = new SkillsClient(await connect(era));
    const listing = await skills.list();
    const { skill: got } = await skills.get('skill://commit-style/SKILL.md');
    for (const skill of [listing.skills[0]!, got]) {
      if (skill.resources === 'dynamic') throw new Error('expected a static skill');
      expect(skill.resources.map((r) => r.uri)).toEqual(['skill://commit-style/SKILL.md']);
      const text = JSON.stringify(skill);
      expect(text).not.toContain('EXAMPLES');
      expect(text).not.toContain(DENIED_DIGEST);
    }
  });

  it('answers skills/get of a denied skill exactly like one that does not exist', async () => {
    const skills = new SkillsClient(await connect(era));
    const denied = await settle(skills.get('skill://pdf-forms/SKILL.md'));
    const missing = await settle(skills.get('skill://no-such/SKILL.md'));
    expect(denied.ok || missing.ok).toBe(false);
    const shape = (outcome: typeof denied, uri: string): unknown => {
      const error = (outcome as { error: { code: number; message: string } }).error;
      return { code: error.code, message: error.message.replace(uri, 'URI') };
    };
    expect(shape(denied, 'skill://pdf-forms/SKILL.md')).toEqual(
      shape(missing, 'skill://no-such/SKILL.md'),
    );
  });

  it('refuses the files of a denied skill, and a denied file, like missing ones', async () => {
    const client = await connect(era);
    for (const uri of [
      'skill://pdf-forms/SKILL.md',
      'skill://pdf-forms/references/GUIDE.md',
      'skill://commit-style/EXAMPLES.md',
    ]) {
      await expect(client.readResource({ uri }), uri).rejects.toMatchObject({
        code: -32602,
        data: { uri },
      });
    }
    const allowed = await client.readResource({ uri: 'skill://commit-style/SKILL.md' });
    expect(allowed.contents[0]).toMatchObject({
      uri: 'skill://commit-style/SKILL.md',
      mimeType: 'text/markdown',
    });
  });

  it('does not let a principal subscribe to a file of a denied skill', async () => {
    const client = await connect(era);
    const uri = 'skill://pdf-forms/SKILL.md';
    if (era === '2025')
      await expect(client.subscribeResource({ uri })).rejects.toMatchObject({ code: -32602 });
    else {
      const subscription = await client.listen({
        resourceSubscriptions: [uri, 'skill://commit-style/SKILL.md'],
      });
      expect(subscription.honoredFilter.resourceSubscriptions).toEqual([
        'skill://commit-style/SKILL.md',
      ]);
      await subscription.close();
    }
  });

  it('refuses a directory read of a denied skill, and leaves a denied file out of its folder', async () => {
    const client = await connect(era);
    await expect(
      client.request(
        { method: 'resources/directory/read', params: { uri: 'skill://pdf-forms' } },
        DirectoryResult,
      ),
    ).rejects.toMatchObject({ code: -32602 });
    const folder = await client.request(
      { method: 'resources/directory/read', params: { uri: 'skill://commit-style' } },
      DirectoryResult,
    );
    expect(folder.resources.map((r) => r.name)).toEqual(['SKILL.md']);
  });

  it('names no child a principal may not see in a files directory read', async () => {
    const client = await connect(era);
    const root = await client.request(
      { method: 'resources/directory/read', params: { uri: pathToFileURL(docsRoot).href + '/' } },
      DirectoryResult,
    );
    expect(root.resources.map((r) => r.name)).toEqual(['guide.md']);
  });
});
