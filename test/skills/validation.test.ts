/**
 * Validation a publisher can act on: each rule broken once, seen through `reservoir skills lint`
 * (a line naming the skill and the rule, exit code 1), `reservoir check` (a warning, an error under
 * strict), the serve log, and a strict catalog refusing to start. The valid skills beside a broken
 * one are still served.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { CLI_PATH, ensureBuilt } from '../helpers/build.js';
import { Cleanup, connectStdio, spawnHttpServer } from '../helpers/clients.js';
import { manifest, skillsConfig, skillsFolder, validSkills } from './fixtures.js';

const run = promisify(execFile);
const cleanup = new Cleanup();
beforeAll(() => ensureBuilt(), 60_000);
afterAll(() => cleanup.run());

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI_PATH, ...args]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** One broken skill per rule: the files to add to a valid catalog, and the line lint must print. */
const RULES: {
  rule: string;
  files: Record<string, string>;
  line: RegExp;
  prepare?: (root: string) => void;
}[] = [
  {
    rule: 'a SKILL.md without frontmatter',
    files: { 'plain/SKILL.md': '# no frontmatter\n' },
    line: /plain\/SKILL\.md: SKILL\.md frontmatter: line 1: SKILL\.md must begin with a "---" line \(skill skipped\)/,
  },
  {
    rule: 'malformed frontmatter YAML',
    files: { 'broken/SKILL.md': '---\nname: broken\ndescription: [unclosed\n---\n' },
    line: /broken\/SKILL\.md: SKILL\.md frontmatter: line 3: a flow collection must close on the same line/,
  },
  {
    rule: 'a frontmatter without a description',
    files: { 'terse/SKILL.md': '---\nname: terse\n---\n' },
    line: /terse\/SKILL\.md: SKILL\.md frontmatter must contain string "name" and "description"/,
  },
  {
    rule: 'a name that breaks the naming rule',
    files: { 'Bad_Name/SKILL.md': manifest('Bad_Name', 'x') },
    line: /Bad_Name\/SKILL\.md: frontmatter name "Bad_Name" must be 1-64 lowercase letters, digits and single hyphens/,
  },
  {
    rule: 'a name that differs from its folder',
    files: { 'folder-a/SKILL.md': manifest('folder-b', 'x') },
    line: /folder-a\/SKILL\.md: frontmatter name "folder-b" must match the last path segment "folder-a"/,
  },
  {
    rule: 'a description over 1024 characters',
    files: { 'long/SKILL.md': manifest('long', 'd'.repeat(1025)) },
    line: /long\/SKILL\.md: frontmatter description must be 1-1024 characters/,
  },
  {
    rule: 'a SKILL.md at the root of the folder',
    files: { 'SKILL.md': manifest('root', 'x') },
    line: /: SKILL\.md: a SKILL\.md at the root of the skills folder has no skill path/,
  },
  {
    rule: 'a misspelt skill.md',
    files: { 'lower/skill.md': manifest('lower', 'x') },
    line: /lower\/skill\.md: did you mean SKILL\.md\? File names are case-sensitive/,
  },
  {
    rule: 'a symlink inside a skill',
    files: { 'linked/SKILL.md': manifest('linked', 'x') },
    prepare: (root) => symlinkSync(join(root, 'pdf-forms/SKILL.md'), join(root, 'linked/other.md')),
    line: /linked\/other\.md: symlinks and other special files are not followed; copy the file instead \(skill skipped\)/,
  },
  {
    rule: 'a FIFO inside a skill',
    files: { 'piped/SKILL.md': manifest('piped', 'x') },
    prepare: (root) => execFileSync('mkfifo', [join(root, 'piped/queue')]),
    line: /piped\/queue: symlinks and other special files are not followed; copy the file instead \(skill skipped\)/,
  },
  {
    rule: 'more files than SKILL_LIMITS allows',
    files: { 'huge/SKILL.md': manifest('huge', 'x') },
    prepare: (root) => {
      mkdirSync(join(root, 'huge/data'));
      for (let i = 0; i < 512; i += 1) writeFileSync(join(root, `huge/data/${i}.txt`), '');
    },
    line: /huge: 513 files \/ \d+ bytes exceeds the limit of 512 files \/ 16777216 bytes/,
  },
];

describe('reservoir skills lint', () => {
  it('passes a valid folder with exit code 0', async () => {
    const result = await cli('skills', 'lint', skillsFolder());
    expect({ code: result.code, stdout: result.stdout }).toEqual({
      code: 0,
      stdout: '2 skills valid, 0 problems\n',
    });
  });

  it.each(RULES)(
    'names the skill and the rule for $rule, and exits 1',
    async ({ files, line, prepare }) => {
      const root = skillsFolder({ ...validSkills(), ...files });
      prepare?.(root);
      const result = await cli('skills', 'lint', root);
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(line);
      expect(result.stdout).toMatch(/^--skills .*: /);
    },
  );
});

describe('a broken skill at serve time', () => {
  it('is left out, logged with the skill and the rule, while the valid ones are served', async () => {
    const root = skillsFolder({ ...validSkills(), 'folder-a/SKILL.md': manifest('folder-b', 'x') });
    const connection = await connectStdio('2026', [], ['--skills', root], cleanup);
    const listing = await new SkillsClient(connection.client).list();
    expect(listing.skills.map((s) => s.frontmatter.name)).toEqual(['commit-style', 'pdf-forms']);
    expect(connection.stderr()).toMatch(
      /skill problem: folder-a\/SKILL\.md: frontmatter name \\?"folder-b\\?" must match/,
    );
  });

  it('under strict, stops the server from starting and says why', async () => {
    const root = skillsFolder({ ...validSkills(), 'folder-a/SKILL.md': manifest('folder-b', 'x') });
    const config = skillsConfig([{ source: { type: 'files', root }, strict: true }]);
    await expect(spawnHttpServer([], ['--config', config], cleanup)).rejects.toThrow(
      /server exited \(1\).*folder-a\/SKILL\.md: frontmatter name "folder-b" must match the last path segment "folder-a"/s,
    );
  });
});

describe('reservoir check', () => {
  it('prints each skill problem as a warning and passes', async () => {
    const root = skillsFolder({ ...validSkills(), 'plain/SKILL.md': 'no frontmatter\n' });
    const config = skillsConfig([{ source: { type: 'files', root } }]);
    const result = await cli('check', '--config', config);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(
      /^warning: skills\[0\]: plain\/SKILL\.md: SKILL\.md frontmatter: line 1: SKILL\.md must begin with a "---" line/m,
    );
    expect(result.stdout).toMatch(/valid \(0 sources, 0 prompts, 1 skills catalog; serves stdio\)/);
  });

  it('fails on a strict catalog with a problem, naming it as an error', async () => {
    const root = skillsFolder({ ...validSkills(), 'plain/SKILL.md': 'no frontmatter\n' });
    const config = skillsConfig([{ source: { type: 'files', root }, strict: true }]);
    const result = await cli('check', '--config', config);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: skills\[0\]: plain\/SKILL\.md: /m);
  });

  it('refuses a skills source that cannot hold skills, and a path leaving the source, naming each field', async () => {
    const config = skillsConfig([
      { source: { type: 'sql', url: 'sqlite:skills.db' } },
      { source: { type: 'files', root: skillsFolder() }, path: '../elsewhere' },
    ]);
    const result = await cli('check', '--config', config);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /skills\[0\]\.source\.type: expected one of 'files', 'git', 's3', got 'sql'/,
    );
    expect(result.stderr).toMatch(
      /skills\[1\]\.path: expected a relative path inside the source, without \. or \.\. segments/,
    );
  });

  it('refuses a skills entry with a bad prefix, naming the field', async () => {
    const config = skillsConfig([
      { source: { type: 'files', root: skillsFolder() }, prefix: 'Acme Corp' },
    ]);
    const result = await cli('check', '--config', config);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/skills\[0\]\.prefix: expected lowercase letters, digits/);
  });
});

// Each test starts the built CLI on a folder of broken skills (13–16 s on a loaded machine, where two
// suites run at once): a budget of its own rather than the default 30 s.
describe(
  'every rule, in the log, in reservoir check and under strict',
  { timeout: 120_000 },
  () => {
    /** One folder breaking every rule at once, beside the valid skills. */
    function everyRule(): string {
      const root = skillsFolder({
        ...validSkills(),
        ...Object.assign({}, ...RULES.map((r) => r.files)),
      });
      for (const rule of RULES) rule.prepare?.(root);
      return root;
    }
    /** A rule's line, as printed after a prefix (`warning: skills[0]: `, a log line's `skill problem: `). */
    const after = (prefix: string, line: RegExp): RegExp =>
      new RegExp(`${prefix}${line.source.replace(/^:\s*/, '')}`, 'm');

    it('reservoir check warns of each, naming the skill and the rule, and passes', async () => {
      const config = skillsConfig([{ source: { type: 'files', root: everyRule() } }]);
      const result = await cli('check', '--config', config);
      expect(result.code).toBe(0);
      for (const { rule, line } of RULES)
        expect(result.stderr, rule).toMatch(after('^warning: skills\\[0\\]: ', line));
    });

    it('reservoir check under strict fails with each as an error', async () => {
      const config = skillsConfig([{ source: { type: 'files', root: everyRule() }, strict: true }]);
      const result = await cli('check', '--config', config);
      expect(result.code).toBe(1);
      for (const { rule, line } of RULES)
        expect(result.stderr, rule).toMatch(after('^error: skills\\[0\\]: ', line));
    });

    it('the server logs each, naming the skill and the rule, and serves the valid skills', async () => {
      const connection = await connectStdio('2026', [], ['--skills', everyRule()], cleanup);
      const listing = await new SkillsClient(connection.client).list();
      // Over SKILL_LIMITS is the SDK's warning that "some hosts may decline it": the skill is still served.
      expect(listing.skills.map((s) => s.frontmatter.name)).toEqual([
        'commit-style',
        'huge',
        'pdf-forms',
      ]);
      const log = connection.stderr().replaceAll('\\"', '"');
      for (const { rule, line } of RULES) expect(log, rule).toMatch(after('skill problem: ', line));
    });
  },
);

describe('the config file inside a skill folder', () => {
  it('is never published: not in the skill entry, and read like a missing file', async () => {
    const root = skillsFolder();
    const config = join(root, 'commit-style', 'reservoir.json');
    writeFileSync(
      config,
      JSON.stringify({
        skills: [{ source: { type: 'files', root }, prefix: 'team' }],
        server: { instructions: 'secret-ish' },
      }),
    );
    const connection = await connectStdio('2026', [], ['--config', config], cleanup);
    const skill = (
      await new SkillsClient(connection.client).get('skill://team/commit-style/SKILL.md')
    ).skill;
    expect(skill.resources === 'dynamic' ? [] : skill.resources.map((r) => r.uri)).toEqual([
      'skill://team/commit-style/EXAMPLES.md',
      'skill://team/commit-style/SKILL.md',
    ]);
    await expect(
      connection.client.readResource({ uri: 'skill://team/commit-style/reservoir.json' }),
    ).rejects.toMatchObject({ code: -32602 });
  });
});
