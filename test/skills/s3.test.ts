/**
 * Skills from an S3 source: `reservoir serve --config` with a `skills:` entry naming an s3 bucket
 * (a key prefix, and a folder under it) on a real S3 API server (s3rver), through the real SDK
 * client in both eras over stdio and HTTP: skills/list and skills/get, every file of every skill
 * read back byte for byte with its digest verified, a skill's folders read as directories, and a
 * changed SKILL.md object (found by polling) updating the listing with `list_changed` and
 * `updated` to its subscriber.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { ensureBuilt } from '../helpers/build.js';
import {
  Cleanup,
  connectTarget,
  spawnHttpServer,
  TARGETS,
  type Target,
} from '../helpers/clients.js';
import { LocalS3 } from '../providers/s3-server.js';
import { Recorder, waitFor, watchUris } from '../subscriptions/harness.js';
import { manifest, skillsConfig, validSkills } from './fixtures.js';

const cleanup = new Cleanup();
let s3: LocalS3;
let buckets = 0;

beforeAll(async () => {
  await ensureBuilt();
  s3 = await LocalS3.start();
}, 60_000);
afterEach(() => cleanup.run());
afterAll(async () => {
  await s3?.close();
});

/** A bucket holding the valid skills under `team/skills/`, and a config serving them. */
async function bucketOfSkills(): Promise<{ bucket: string; config: string }> {
  const bucket = `skills-${process.pid}-${(buckets += 1)}`;
  await s3.bucket(bucket);
  await s3.putMany(bucket, [
    ...Object.entries(validSkills()).map(
      ([path, bytes]) => [`team/skills/${path}`, bytes] as const,
    ),
    ['team/other.txt', 'not a skill\n'],
  ]);
  const config = skillsConfig([
    {
      source: { type: 's3', ...s3.source(bucket, { prefix: 'team/', pollIntervalMs: 50 }) },
      path: 'skills',
    },
  ]);
  return { bucket, config };
}

async function serve(target: Target, config: string): Promise<Client> {
  const args = ['--config', config];
  const httpUrl =
    target.transport === 'http' ? (await spawnHttpServer([], args, cleanup)).url : undefined;
  return connectTarget(
    target,
    { roots: [], args, ...(httpUrl === undefined ? {} : { httpUrl }) },
    cleanup,
  );
}

describe.each(TARGETS)('skills from an S3 source, $transport $era era', (target) => {
  it('lists and gets the skills, and reads every file back byte for byte', async () => {
    const { config } = await bucketOfSkills();
    const skills = new SkillsClient(await serve(target, config));
    const listing = await skills.list();
    expect(listing.skills.map((s) => s.uri)).toEqual([
      'skill://commit-style/SKILL.md',
      'skill://pdf-forms/SKILL.md',
    ]);
    const pdf = (await skills.get('skill://pdf-forms/SKILL.md')).skill;
    expect(pdf.frontmatter).toEqual({ name: 'pdf-forms', description: 'Fill in PDF forms.' });
    const files = validSkills();
    let read = 0;
    for (const skill of listing.skills) {
      for (const resource of skill.resources === 'dynamic' ? [] : skill.resources) {
        const file = await skills.read(skill, resource.uri);
        expect(file.verified, resource.uri).toBe(true);
        expect(
          Buffer.from(file.bytes).equals(files[resource.uri.slice('skill://'.length)]!),
          resource.uri,
        ).toBe(true);
        read += 1;
      }
    }
    expect(read).toBe(Object.keys(files).length);
    const folder = await skills.readDirectory('skill://pdf-forms');
    expect(folder.resources.map((r) => r.name)).toEqual([
      'SKILL.md',
      'assets',
      'references',
      'scripts',
    ]);
  });

  it('a changed SKILL.md object updates the listing, with list_changed and updated to its subscriber', async () => {
    const { bucket, config } = await bucketOfSkills();
    const client = await serve(target, config);
    const recorder = new Recorder(client);
    const skills = new SkillsClient(client);
    const uri = 'skill://pdf-forms/SKILL.md';
    await watchUris(client, target.era, [uri], true);
    await s3.put(
      bucket,
      'team/skills/pdf-forms/SKILL.md',
      manifest('pdf-forms', 'Fill in and sign PDF forms.'),
    );
    await waitFor(
      () => recorder.updates(uri) >= 1 && recorder.listChanges() >= 1,
      () => JSON.stringify(recorder.events),
      10_000,
    );
    const listing = await skills.list();
    expect(
      listing.skills.find((s) => s.frontmatter.name === 'pdf-forms')?.frontmatter.description,
    ).toBe('Fill in and sign PDF forms.');
    const before = recorder.listChanges();
    await s3.put(
      bucket,
      'team/skills/release-notes/SKILL.md',
      manifest('release-notes', 'Draft release notes.'),
    );
    await waitFor(
      () => recorder.listChanges() > before,
      'list_changed after an added skill',
      10_000,
    );
    expect((await skills.list()).skills.map((s) => s.frontmatter.name)).toEqual([
      'commit-style',
      'pdf-forms',
      'release-notes',
    ]);
  });
});
