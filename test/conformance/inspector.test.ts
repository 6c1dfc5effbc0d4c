// A second, independent client: the MCP Inspector's CLI (`--cli`, v2, pinned in scripts/inspector/)
// against `reservoir serve <dir>` over stdio. It needs Node >= 22.19, so it runs on the pinned
// Node 22 binary; scripts/inspector.mjs installs both on demand into .cache/. The test skips only
// when no such Node binary can be obtained.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_PATH, ensureBuilt, REPO_ROOT } from '../helpers/build.js';
import { skillsFolder, validSkills } from '../skills/fixtures.js';

const run = promisify(execFile);
const root = mkdtempSync(join(tmpdir(), 'reservoir-inspector-'));
const home = mkdtempSync(join(tmpdir(), 'reservoir-inspector-home-'));
const rootUri = pathToFileURL(root).href;
let inspector: { node: string; cli: string; version: string } | undefined;
let unavailable: string | undefined;

beforeAll(async () => {
  writeFileSync(join(root, 'hello.txt'), 'Hello from Reservoir.\n');
  writeFileSync(join(root, 'notes.md'), '# Notes\n');
  await ensureBuilt();
  try {
    const { stdout } = await run(process.execPath, [join(REPO_ROOT, 'scripts', 'inspector.mjs')], {
      cwd: REPO_ROOT,
      timeout: 300_000,
    });
    inspector = JSON.parse(stdout) as typeof inspector;
  } catch (error) {
    const failure = error as { code?: number; stderr?: string };
    if (failure.code !== 3) throw error;
    unavailable = `skipped: no Node >= 22.19 binary could be obtained for the MCP Inspector (${String(failure.stderr).trim()})`;
    console.warn(unavailable);
  }
}, 320_000);

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

/** Runs `inspector --cli --method METHOD ARGS… -- node reservoir serve ROOT`; resolves with its JSON output. */
async function inspect(method: string, ...args: string[]): Promise<Record<string, unknown>> {
  return JSON.parse(await inspectText(['serve', root], method, ...args)) as Record<string, unknown>;
}

/** Runs `inspector --cli --method METHOD ARGS… -- node reservoir SERVE…`; resolves with its standard output. */
async function inspectText(serve: string[], method: string, ...args: string[]): Promise<string> {
  const { node, cli } = inspector!;
  const { stdout } = await run(
    node,
    [
      cli,
      '--cli',
      '--method',
      method,
      ...args,
      '--',
      process.execPath,
      CLI_PATH,
      ...serve,
      '--no-config',
      '--log-level',
      'warn',
    ],
    {
      cwd: root,
      timeout: 30_000,
      env: { ...process.env, HOME: home },
    },
  );
  return stdout;
}

describe('the MCP Inspector CLI against reservoir serve <dir> (stdio)', () => {
  it('lists the resources', async (ctx) => {
    if (unavailable !== undefined) return ctx.skip(unavailable);
    const { resources } = await inspect('resources/list');
    expect((resources as { uri: string }[]).map((r) => r.uri).sort()).toEqual([
      `${rootUri}/hello.txt`,
      `${rootUri}/notes.md`,
    ]);
  });

  it('reads one', async (ctx) => {
    if (unavailable !== undefined) return ctx.skip(unavailable);
    const { contents } = await inspect('resources/read', '--uri', `${rootUri}/hello.txt`);
    expect(contents).toEqual([
      { uri: `${rootUri}/hello.txt`, mimeType: 'text/plain', text: 'Hello from Reservoir.\n' },
    ]);
  });

  it('lists the resource templates', async (ctx) => {
    if (unavailable !== undefined) return ctx.skip(unavailable);
    const { resourceTemplates } = await inspect('resources/templates/list');
    expect(Array.isArray(resourceTemplates)).toBe(true);
    for (const template of resourceTemplates as { uriTemplate: string; name: string }[]) {
      expect(template.uriTemplate.startsWith(`${rootUri}/`)).toBe(true);
      expect(template.name).toBeTruthy();
    }
  });

  it('lists the prompts (none without a config)', async (ctx) => {
    if (unavailable !== undefined) return ctx.skip(unavailable);
    expect(await inspect('prompts/list')).toEqual({ prompts: [] });
  });

  it('calls a tool', async (ctx) => {
    if (unavailable !== undefined) return ctx.skip(unavailable);
    const result = await inspect(
      'tools/call',
      '--tool-name',
      'read_resource',
      '--tool-arg',
      `uri=${rootUri}/notes.md`,
    );
    expect(result['isError']).toBeFalsy();
    expect(result['content']).toEqual([
      { type: 'text', text: '# Notes\n' },
      {
        type: 'resource_link',
        uri: `${rootUri}/notes.md`,
        name: 'notes.md',
        mimeType: 'text/markdown',
        size: 8,
      },
    ]);
  });
});

// Inspector 2.12.0's CLI speaks the skills extension (SEP-2640): `--method skills/list | skills/get`,
// and `--verify`, its conformance and digest checks over every skill and file.
describe('the MCP Inspector CLI against reservoir serve --skills <dir> (stdio)', () => {
  it("lists Reservoir's skills", async (ctx) => {
    if (unavailable !== undefined) return ctx.skip(unavailable);
    const { skills } = JSON.parse(
      await inspectText(['serve', '--skills', skillsFolder()], 'skills/list'),
    ) as { skills: { uri: string; frontmatter: { name: string } }[] };
    expect(skills.map((s) => [s.uri, s.frontmatter.name])).toEqual([
      ['skill://commit-style/SKILL.md', 'commit-style'],
      ['skill://pdf-forms/SKILL.md', 'pdf-forms'],
    ]);
  });

  it('verifies every skill and every file of it: conformance and digests', async (ctx) => {
    if (unavailable !== undefined) return ctx.skip(unavailable);
    // Exits 7 (a check failed) or 8 (not fully checked) otherwise, which rejects here.
    const stdout = await inspectText(
      ['serve', '--skills', skillsFolder()],
      'skills/list',
      '--verify',
    );
    const reports = stdout
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as {
            uri: string;
            ok: boolean;
            outcome: string;
            conformance: unknown[];
            files: { uri: string; status: string }[];
          },
      );
    expect(reports.map((r) => [r.uri, r.ok, r.outcome, r.conformance])).toEqual([
      ['skill://commit-style/SKILL.md', true, 'verified', []],
      ['skill://pdf-forms/SKILL.md', true, 'verified', []],
    ]);
    const files = reports.flatMap((r) => r.files.map((f) => [f.uri, f.status]));
    expect(files.map(([uri]) => uri).sort()).toEqual(
      Object.keys(validSkills())
        .map((path) => `skill://${path}`)
        .sort(),
    );
    expect(files.every(([, status]) => status === 'verified')).toBe(true);
  });
});
