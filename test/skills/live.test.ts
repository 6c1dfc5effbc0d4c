/**
 * A live catalog: editing, adding and removing a skill (in a folder, or by moving a git branch)
 * updates skills/list and sends `list_changed`, and `updated` to a client subscribed to the
 * changed skill file — in both eras, over stdio and HTTP, through the real SDK client.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { ensureBuilt } from '../helpers/build.js';
import { eventuallyAccepted } from '../helpers/eventually.js';
import {
  Cleanup,
  connectTarget,
  spawnHttpServer,
  TARGETS,
  type Target,
} from '../helpers/clients.js';
import { commit } from '../providers/git-helpers.js';
import { Recorder, waitFor, watchUris } from '../subscriptions/harness.js';
import { manifest, skillsConfig, skillsFolder, skillsRepo, writeTree } from './fixtures.js';

const cleanup = new Cleanup();
beforeAll(() => ensureBuilt(), 60_000);
afterEach(() => cleanup.run());

async function serve(target: Target, args: string[]): Promise<Client> {
  const httpUrl =
    target.transport === 'http' ? (await spawnHttpServer([], args, cleanup)).url : undefined;
  return connectTarget(
    target,
    { roots: [], args, ...(httpUrl === undefined ? {} : { httpUrl }) },
    cleanup,
  );
}

async function descriptions(skills: SkillsClient): Promise<Record<string, string>> {
  return Object.fromEntries(
    (await skills.list()).skills.map((s) => [s.frontmatter.name, s.frontmatter.description]),
  );
}

describe.each(TARGETS)('live skills, $transport $era era', (target) => {
  it('an edited SKILL.md updates the listing and notifies list_changed and the subscribed file', async () => {
    const folder = skillsFolder();
    const client = await serve(target, ['--skills', folder]);
    const recorder = new Recorder(client);
    const skills = new SkillsClient(client);
    const uri = 'skill://pdf-forms/SKILL.md';
    await watchUris(client, target.era, [uri], true);
    writeFileSync(
      join(folder, 'pdf-forms/SKILL.md'),
      manifest('pdf-forms', 'Fill in and sign PDF forms.'),
    );
    await waitFor(
      () => recorder.updates(uri) >= 1 && recorder.listChanges() >= 1,
      () => JSON.stringify(recorder.events),
    );
    // writeFileSync empties the file before it writes: a rebuild can come between (the skill
    // skipped, a list_changed of its own), so the new description is waited for
    await eventuallyAccepted(
      () => descriptions(skills),
      (d) => d['pdf-forms'] === 'Fill in and sign PDF forms.',
      'the new description',
    );
    const skill = (await skills.get(uri)).skill;
    expect((await skills.read(skill)).text).toContain('Fill in and sign PDF forms.');
  });

  it('a skill added or removed appears in or leaves skills/list, with list_changed each time', async () => {
    const folder = skillsFolder();
    const client = await serve(target, ['--skills', folder]);
    const recorder = new Recorder(client);
    const skills = new SkillsClient(client);
    await watchUris(client, target.era, [], true);
    writeTree(folder, {
      'release-notes/SKILL.md': manifest('release-notes', 'Draft release notes.'),
    });
    await waitFor(() => recorder.listChanges() >= 1, 'list_changed after an add');
    // (the file is created empty, then written: the skill is listed once its text is read)
    await eventuallyAccepted(
      async () => Object.keys(await descriptions(skills)).sort(),
      (names) => names.join() === 'commit-style,pdf-forms,release-notes',
      'the added skill to be listed',
    );
    const before = recorder.listChanges();
    rmSync(join(folder, 'commit-style'), { recursive: true });
    await waitFor(() => recorder.listChanges() > before, 'list_changed after a removal');
    expect(Object.keys(await descriptions(skills)).sort()).toEqual(['pdf-forms', 'release-notes']);
  });
});

describe.each(TARGETS.filter((t) => t.transport === 'stdio'))(
  'live skills from git, $era era',
  (target) => {
    it('moving the branch updates the listing and notifies list_changed and the subscribed file', async () => {
      const repo = skillsRepo();
      const config = skillsConfig([
        { source: { type: 'git', path: repo, branch: 'main', pollIntervalMs: 50 }, path: 'skills' },
      ]);
      const client = await serve(target, ['--config', config]);
      const recorder = new Recorder(client);
      const skills = new SkillsClient(client);
      const uri = 'skill://commit-style/SKILL.md';
      await watchUris(client, target.era, [uri], true);
      commit(
        repo,
        {
          'skills/commit-style/SKILL.md': manifest('commit-style', 'Conventional commits, always.'),
        },
        'edit',
      );
      await waitFor(
        () => recorder.updates(uri) >= 1 && recorder.listChanges() >= 1,
        () => JSON.stringify(recorder.events),
      );
      expect((await descriptions(skills))['commit-style']).toBe('Conventional commits, always.');
    });
  },
);
