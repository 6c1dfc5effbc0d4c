/**
 * Agent Skills over MCP, through the real SDK client (and its SkillsClient, which verifies every
 * digest) in both eras, over stdio and HTTP, from a folder and from a git repository made here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { SKILLS_EXTENSION_ID, SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { z } from 'zod';
import { ensureBuilt } from '../helpers/build.js';
import {
  Cleanup,
  connectTarget,
  spawnHttpServer,
  TARGETS,
  type Target,
} from '../helpers/clients.js';
import { repoName } from '../providers/git-helpers.js';
import { skillsConfig, skillsFolder, skillsRepo, validSkills } from './fixtures.js';

interface Served {
  kind: 'files' | 'git';
  /** Command-line arguments serving it. */
  args: string[];
  /** The skill:// root of the catalog. */
  root: string;
  /** A directory URI of the source itself, for a plain directory read. */
  sourceDir: string;
  httpUrl?: string;
}

const DirectoryResult = z.looseObject({
  resources: z.array(
    z.looseObject({ uri: z.string(), name: z.string(), mimeType: z.string().optional() }),
  ),
  nextCursor: z.string().optional(),
});
const cleanup = new Cleanup();
const files = validSkills();
const served: Served[] = [];

beforeAll(async () => {
  await ensureBuilt();
  const folder = skillsFolder();
  const repo = skillsRepo();
  served.push({ kind: 'files', args: ['--skills', folder], root: 'skill://', sourceDir: '' });
  const config = skillsConfig(
    [{ source: { type: 'git', path: repo, branch: 'main' }, path: 'skills', prefix: 'team' }],
    { sources: [{ type: 'git', path: repo }] },
  );
  served.push({
    kind: 'git',
    args: ['--config', config],
    root: 'skill://team/',
    sourceDir: `git://${repoName(repo)}/main/skills/`,
  });
  for (const entry of served) entry.httpUrl = (await spawnHttpServer([], entry.args, cleanup)).url;
}, 60_000);

afterAll(() => cleanup.run());

async function connect(target: Target, entry: Served): Promise<Client> {
  return connectTarget(
    target,
    {
      roots: [],
      args: entry.args,
      ...(entry.httpUrl === undefined ? {} : { httpUrl: entry.httpUrl }),
    },
    cleanup,
  );
}

describe.each(TARGETS)('skills, $transport $era era', (target) => {
  describe.each(['files', 'git'] as const)('from %s', (kind) => {
    const entry = (): Served => served.find((s) => s.kind === kind)!;

    it('declares the skills extension with directory reads', async () => {
      const client = await connect(target, entry());
      expect(client.getServerCapabilities()?.extensions?.[SKILLS_EXTENSION_ID]).toEqual({
        directoryRead: true,
      });
      expect(new SkillsClient(client).supported).toBe(true);
    });

    it('lists every valid skill with its frontmatter and files, and gets each by URI', async () => {
      const client = await connect(target, entry());
      const skills = new SkillsClient(client);
      const listing = await skills.list();
      const root = entry().root;
      expect(listing.invalid).toEqual([]);
      expect(listing.skills.map((s) => s.uri)).toEqual([
        `${root}commit-style/SKILL.md`,
        `${root}pdf-forms/SKILL.md`,
      ]);
      const pdf = listing.skills[1]!;
      expect(pdf.frontmatter).toEqual({ name: 'pdf-forms', description: 'Fill in PDF forms.' });
      expect(pdf.resources === 'dynamic' ? [] : pdf.resources.map((r) => r.uri)).toEqual([
        `${root}pdf-forms/SKILL.md`,
        `${root}pdf-forms/assets/logo.png`,
        `${root}pdf-forms/references/GUIDE.md`,
        `${root}pdf-forms/scripts/fill.py`,
      ]);
      const got = await skills.get(pdf.uri);
      expect(got.skill).toEqual(pdf);
      if (target.era === '2026')
        expect({ ttlMs: got.ttlMs, cacheScope: got.cacheScope }).toEqual({
          ttlMs: 0,
          cacheScope: 'public',
        });
    });

    it('reads every file of every skill back byte for byte, digests verified', async () => {
      const client = await connect(target, entry());
      const skills = new SkillsClient(client);
      const root = entry().root;
      let read = 0;
      for (const skill of (await skills.list()).skills) {
        for (const resource of skill.resources === 'dynamic' ? [] : skill.resources) {
          const file = await skills.read(skill, resource.uri);
          expect(file.verified).toBe(true);
          expect(Buffer.from(file.bytes).equals(files[resource.uri.slice(root.length)]!)).toBe(
            true,
          );
          read += 1;
        }
      }
      expect(read).toBe(Object.keys(files).length);
    });

    it('reads the folders of a skill as directories, and the source folder too', async () => {
      const client = await connect(target, entry());
      const skills = new SkillsClient(client);
      const root = entry().root;
      const top = await skills.readDirectory(`${root}pdf-forms`);
      expect(top.resources.map((r) => [r.name, r.mimeType])).toEqual([
        ['SKILL.md', 'text/markdown'],
        ['assets', 'inode/directory'],
        ['references', 'inode/directory'],
        ['scripts', 'inode/directory'],
      ]);
      const nested = await skills.readDirectory(`${root}pdf-forms/references`);
      expect(nested.resources).toEqual([
        {
          uri: `${root}pdf-forms/references/GUIDE.md`,
          name: 'GUIDE.md',
          mimeType: 'text/markdown',
          size: files['pdf-forms/references/GUIDE.md']!.length,
        },
      ]);
      if (entry().sourceDir !== '') {
        const plain = await client.request(
          { method: 'resources/directory/read', params: { uri: entry().sourceDir } },
          DirectoryResult,
        );
        expect(plain.resources.map((r) => [r.name, r.mimeType])).toEqual([
          ['commit-style', 'inode/directory'],
          ['pdf-forms', 'inode/directory'],
        ]);
      }
    });

    it('answers an unknown skill like a missing one, and an unknown skill file as not found', async () => {
      const client = await connect(target, entry());
      const root = entry().root;
      await expect(new SkillsClient(client).get(`${root}nope/SKILL.md`)).rejects.toMatchObject({
        code: -32602,
      });
      // The SDK client reports the legacy -32002 as -32602 too; the wire code is pinned by test/e2e/not-found-wire.test.ts.
      await expect(
        client.readResource({ uri: `${root}pdf-forms/missing.md` }),
      ).rejects.toMatchObject({ code: -32602, data: { uri: `${root}pdf-forms/missing.md` } });
    });
  });
});

describe('without skills', () => {
  it.each(TARGETS.filter((t) => t.transport === 'stdio'))(
    'does not declare the extension ($era era)',
    async (target) => {
      const client = await connectTarget(target, { roots: [skillsFolder()] }, cleanup);
      expect(client.getServerCapabilities()?.extensions?.[SKILLS_EXTENSION_ID]).toBeUndefined();
    },
  );
});
