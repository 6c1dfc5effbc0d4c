// Pins `reservoir setup claude|vscode|cursor`: with a fake HOME, it writes the host's file where the
// host reads it (keeping the servers already there), with absolute node and script paths and the
// directories given; the entry it writes starts a server the real SDK client reads from in both eras;
// --print writes nothing; and bad input (no directory, a missing one, an unknown host, a file that is
// not plain JSON) is refused with a message and leaves the file as it was.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_PATH, ensureBuilt } from '../helpers/build.js';
import { Cleanup, ERAS, newClient } from '../helpers/clients.js';
import { fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';

const cleanup = new Cleanup();
let dir: string;
let docs: string;

beforeAll(async () => {
  await ensureBuilt();
  dir = makeTempDir();
  cleanup.add(() => removeTree(dir));
  docs = join(dir, 'docs');
  writeTree(dir, { 'docs/a.md': '# a\n', 'notes/n.txt': 'n\n', 'plain.txt': 'x' });
});
afterAll(() => cleanup.run());

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function setup(home: string, args: string[], cwd = dir): Promise<Run> {
  const env = { PATH: process.env['PATH'] ?? '', HOME: home };
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI_PATH, 'setup', ...args], { cwd, env, timeout: 15_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr });
    });
  });
}

const readJson = (file: string): Record<string, Record<string, { type?: string; command: string; args: string[] }>> =>
  JSON.parse(readFileSync(file, 'utf8')) as Record<string, Record<string, { type?: string; command: string; args: string[] }>>;

describe('reservoir setup', () => {
  it.each([
    ['claude', '.config/Claude/claude_desktop_config.json', 'mcpServers'],
    ['cursor', '.cursor/mcp.json', 'mcpServers'],
    ['vscode', '.config/Code/User/mcp.json', 'servers'],
  ])('writes the %s entry into HOME/%s under %s, with absolute paths', async (host, file, key) => {
    const home = join(dir, `home-${host}`);
    const run = await setup(home, [host, 'docs', join(dir, 'notes')]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(`added "reservoir" in ${join(home, file)}; restart ${{ claude: 'Claude Desktop', cursor: 'Cursor', vscode: 'VS Code' }[host]} to load it\n`);
    const entry = readJson(join(home, file))[key]!['reservoir']!;
    expect(entry).toEqual({
      ...(host === 'vscode' ? { type: 'stdio' } : {}),
      command: process.execPath,
      args: [CLI_PATH, 'serve', docs, join(dir, 'notes')],
    });
  });

  it('keeps the servers already in the file and replaces only its own entry', async () => {
    const home = join(dir, 'home-keep');
    writeTree(home, { '.cursor/mcp.json': JSON.stringify({ mcpServers: { other: { command: 'x', args: [] } }, theme: 'dark' }) });
    expect((await setup(home, ['cursor', 'docs'])).code).toBe(0);
    const again = await setup(home, ['cursor', 'notes']);
    expect(again.stdout).toContain('replaced "reservoir"');
    const doc = readJson(join(home, '.cursor/mcp.json'));
    expect(doc['mcpServers']!['other']).toEqual({ command: 'x', args: [] });
    expect(doc['mcpServers']!['reservoir']!.args.at(-1)).toBe(join(dir, 'notes'));
    expect(doc['theme']).toBe('dark');
  });

  it('writes a project file with --project and names the entry with --name', async () => {
    const home = join(dir, 'home-project');
    const run = await setup(home, ['vscode', 'docs', '--project', '.', '--name', 'team-docs']);
    expect(run.code, run.stderr).toBe(0);
    expect(readJson(join(dir, '.vscode/mcp.json'))['servers']!['team-docs']!.args).toEqual([CLI_PATH, 'serve', docs]);
  });

  it('prints the entry and the file it belongs in with --print, writing nothing', async () => {
    const home = join(dir, 'home-print');
    const run = await setup(home, ['claude', 'docs', '--print']);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe(`# Claude Desktop reads ${join(home, '.config/Claude/claude_desktop_config.json')}; merge this into it:\n`);
    expect(JSON.parse(run.stdout)).toEqual({ mcpServers: { reservoir: { command: process.execPath, args: [CLI_PATH, 'serve', docs] } } });
    expect(existsSync(home)).toBe(false);
  });

  it('refuses no directory, a missing one, a file, an unknown host and a host file that is not plain JSON', async () => {
    const home = join(dir, 'home-bad');
    writeTree(home, { '.cursor/mcp.json': '{ // a comment\n "mcpServers": {} }\n' });
    const cases: [string[], string][] = [
      [['claude'], 'roots: name the directories the host may read (e.g. reservoir setup claude ~/notes ~/src), or --config FILE'],
      [['claude', 'nowhere'], `root: ${join(dir, 'nowhere')} does not exist`],
      [['claude', 'plain.txt'], `root: ${join(dir, 'plain.txt')} is not a directory`],
      [['zed', 'docs'], "argument value 'zed' is invalid for argument 'host'. Allowed choices are claude, vscode, cursor."],
      [['claude', 'docs', '--project', '.'], '--project: Claude Desktop has no per-project file'],
      [['cursor', 'docs'], `${join(home, '.cursor/mcp.json')}: is not plain JSON`],
    ];
    for (const [args, message] of cases) {
      const run = await setup(home, args);
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.stderr, args.join(' ')).toContain(message);
      expect(run.stdout, args.join(' ')).toBe('');
    }
    expect(readFileSync(join(home, '.cursor/mcp.json'), 'utf8')).toBe('{ // a comment\n "mcpServers": {} }\n');
  });
});

describe.each(ERAS)('the written entry, %s era', (era) => {
  it('starts a server the SDK client reads the named directory from', async () => {
    const home = join(dir, `home-run-${era}`);
    expect((await setup(home, ['claude', 'docs'])).code).toBe(0);
    const entry = readJson(join(home, '.config/Claude/claude_desktop_config.json'))['mcpServers']!['reservoir']!;
    // As a host does: the command and args exactly as written, from an unrelated directory.
    const transport = new StdioClientTransport({ command: entry.command, args: entry.args, cwd: '/', stderr: 'pipe' });
    const client: Client = newClient(era);
    cleanup.add(() => client.close());
    await client.connect(transport);
    const read = await client.readResource({ uri: fileUri(docs, 'a.md') });
    expect(read.contents[0]).toMatchObject({ text: '# a\n' });
    await client.close();
  });
});
