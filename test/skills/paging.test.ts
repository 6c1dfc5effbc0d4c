/**
 * skills/list pages behind the server's sealed cursors, in both eras (in process, over stdio
 * pipes): every skill once, in URI order; a forged cursor or one minted for another list is -32602.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { buildSkills } from '../../src/server/skills.js';
import { ERAS } from '../helpers/clients.js';
import { connectInProcess } from '../subscriptions/harness.js';
import { manifest, skillsFolder } from './fixtures.js';

const names = ['alpha', 'bravo', 'charlie', 'delta', 'echo'];
// SkillsClient.list() without a cursor follows every page itself: pages are read raw here.
const Page = z.looseObject({
  skills: z.array(z.looseObject({ frontmatter: z.looseObject({ name: z.string() }) })),
  nextCursor: z.string().optional(),
});
let reservoir: Reservoir;

beforeAll(async () => {
  const root = skillsFolder(
    Object.fromEntries(
      names.map((name) => [`${name}/SKILL.md`, manifest(name, `The ${name} skill.`)]),
    ),
  );
  const skills = await buildSkills([
    { source: { type: 'files', root }, origin: 'test', pageSize: 2 },
  ]);
  reservoir = createReservoir({ ...(skills === undefined ? {} : { skills }), pageSize: 2 });
});

afterAll(() => reservoir.close());

describe.each(ERAS)('skills/list paging, %s era', (era) => {
  it('returns every skill once, in URI order, two per page', async () => {
    const { client, close } = await connectInProcess(reservoir, era);
    const seen: string[][] = [];
    let cursor: string | undefined;
    do {
      const page = await client.request(
        { method: 'skills/list', params: cursor === undefined ? {} : { cursor } },
        Page,
      );
      seen.push(page.skills.map((s) => s.frontmatter.name));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(seen).toEqual([['alpha', 'bravo'], ['charlie', 'delta'], ['echo']]);
    await close();
  });

  it('refuses a forged cursor and a resources/list cursor with -32602', async () => {
    const { client, close } = await connectInProcess(reservoir, era);
    const skills = new SkillsClient(client);
    const first = await client.request({ method: 'skills/list', params: {} }, Page);
    expect((await skills.list()).skills).toHaveLength(names.length);
    const cursor = first.nextCursor!;
    const forged = `${cursor.slice(0, -1)}${cursor.endsWith('A') ? 'B' : 'A'}`;
    await expect(skills.list({ cursor: forged })).rejects.toMatchObject({ code: -32602 });
    const resources = await client.request(
      { method: 'resources/list', params: {} },
      z.looseObject({ nextCursor: z.string().optional() }),
    );
    expect(resources.nextCursor).toBeDefined();
    await expect(skills.list({ cursor: resources.nextCursor! })).rejects.toMatchObject({
      code: -32602,
    });
    await close();
  });
});
