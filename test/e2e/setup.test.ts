// Pins `reservoir setup claude|claude-code|vscode|cursor|gemini|codex`: with a fake HOME, it writes the host's file where the
// host reads it (keeping the servers already there), with absolute node and script paths and the
// directories given; the entry it writes starts a server the real SDK client reads from in both eras;
// --print writes nothing; and bad input (no directory, a missing one, an unknown host, a file that is
// not plain JSON) is refused with a message and leaves the file as it was. Codex CLI's TOML file keeps
// every line that is not its own table; a --config file is validated (one that serves HTTP is
// refused: the host would start it over stdio), and the `${VAR}`s it uses that are not set are
// passed through in the host's own variable syntax.
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

function setup(
  home: string,
  args: string[],
  cwd = dir,
  extra: Record<string, string> = {},
): Promise<Run> {
  const env = { PATH: process.env['PATH'] ?? '', HOME: home, ...extra };
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_PATH, 'setup', ...args],
      { cwd, env, timeout: 30_000 },
      (error, stdout, stderr) => {
        resolve({
          code: error === null ? 0 : typeof error.code === 'number' ? error.code : null,
          stdout,
          stderr,
        });
      },
    );
  });
}

const readJson = (
  file: string,
): Record<string, Record<string, { type?: string; command: string; args: string[] }>> =>
  JSON.parse(readFileSync(file, 'utf8')) as Record<
    string,
    Record<string, { type?: string; command: string; args: string[] }>
  >;

describe('reservoir setup', () => {
  it.each([
    ['claude', '.config/Claude/claude_desktop_config.json', 'mcpServers', 'Claude Desktop'],
    ['claude-code', '.claude.json', 'mcpServers', 'Claude Code'],
    ['cursor', '.cursor/mcp.json', 'mcpServers', 'Cursor'],
    ['vscode', '.config/Code/User/mcp.json', 'servers', 'VS Code'],
    ['gemini', '.gemini/settings.json', 'mcpServers', 'Gemini CLI'],
  ])(
    'writes the %s entry into HOME/%s under %s, with absolute paths',
    async (host, file, key, title) => {
      const home = join(dir, `home-${host}`);
      const run = await setup(home, [host, 'docs', join(dir, 'notes')]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe(
        `added "reservoir" in ${join(home, file)}; restart ${title} to load it\n`,
      );
      const entry = readJson(join(home, file))[key]!['reservoir']!;
      expect(entry).toEqual({
        ...(host === 'vscode' || host === 'claude-code' ? { type: 'stdio' } : {}),
        command: process.execPath,
        args: [CLI_PATH, 'serve', docs, join(dir, 'notes')],
      });
    },
  );

  it('keeps the servers already in the file and replaces only its own entry', async () => {
    const home = join(dir, 'home-keep');
    writeTree(home, {
      '.cursor/mcp.json': JSON.stringify({
        mcpServers: { other: { command: 'x', args: [] } },
        theme: 'dark',
      }),
    });
    expect((await setup(home, ['cursor', 'docs'])).code).toBe(0);
    const again = await setup(home, ['cursor', 'notes']);
    expect(again.stdout).toContain('replaced "reservoir"');
    const doc = readJson(join(home, '.cursor/mcp.json'));
    expect(doc['mcpServers']!['other']).toEqual({ command: 'x', args: [] });
    expect(doc['mcpServers']!['reservoir']!.args.at(-1)).toBe(join(dir, 'notes'));
    expect(doc['theme']).toBe('dark');
  });

  it('writes the Codex CLI table into CODEX_HOME/config.toml, keeping every other line and replacing only its own table', async () => {
    const home = join(dir, 'home-codex');
    const codexHome = join(home, 'codex-home');
    const before =
      'model = "o4"\n\n[mcp_servers.other]\ncommand = "x"\n\n[mcp_servers."reservoir"]\ncommand = "old"\n\n[mcp_servers.reservoir.env]\nA = "1"\n\n[profiles.fast]\nmodel = "mini"\n';
    writeTree(codexHome, { 'config.toml': before });
    const run = await setup(home, ['codex', 'docs'], dir, { CODEX_HOME: codexHome });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(
      `replaced "reservoir" in ${join(codexHome, 'config.toml')}; restart Codex CLI to load it\n`,
    );
    expect(readFileSync(join(codexHome, 'config.toml'), 'utf8')).toBe(
      `model = "o4"\n\n[mcp_servers.other]\ncommand = "x"\n\n[profiles.fast]\nmodel = "mini"\n\n[mcp_servers.reservoir]\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(CLI_PATH)}, "serve", ${JSON.stringify(docs)}]\n`,
    );
    const fresh = join(dir, 'home-codex-fresh');
    expect((await setup(fresh, ['codex', 'docs', '--name', 'team docs'])).code).toBe(0);
    expect(readFileSync(join(fresh, '.codex/config.toml'), 'utf8')).toMatch(
      /^\[mcp_servers\."team docs"\]\ncommand = /,
    );
  });

  it('refuses to edit a Codex file that defines the server as dotted keys, leaving it as it was', async () => {
    const home = join(dir, 'home-codex-dotted');
    const before = '[mcp_servers]\nreservoir.command = "x"\n';
    writeTree(home, { '.codex/config.toml': before });
    const run = await setup(home, ['codex', 'docs']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('defines "reservoir" inside [mcp_servers] as dotted keys');
    expect(readFileSync(join(home, '.codex/config.toml'), 'utf8')).toBe(before);
  });

  it.each([
    ['claude-code', '.mcp.json', 'mcpServers'],
    ['gemini', '.gemini/settings.json', 'mcpServers'],
    ['cursor', '.cursor/mcp.json', 'mcpServers'],
  ])('writes the %s project file PROJECT/%s with --project', async (host, file, key) => {
    const project = join(dir, `project-${host}`);
    writeTree(project, { 'keep.txt': 'k' });
    const run = await setup(join(dir, 'home-p'), [host, 'docs', '--project', project]);
    expect(run.code, run.stderr).toBe(0);
    expect(readJson(join(project, file))[key]!['reservoir']!.args).toEqual([
      CLI_PATH,
      'serve',
      docs,
    ]);
  });

  it("validates a --config file and passes the variables it uses that are not set here through, in the host's syntax", async () => {
    const config = join(dir, 'team.yaml');
    writeTree(dir, {
      'team.yaml': `sources:\n  - type: files\n    root: "\${TEAM_DOCS}"\n`,
    });
    const cases: [string, string, string, unknown][] = [
      ['claude-code', '.claude.json', 'mcpServers', { TEAM_DOCS: '${TEAM_DOCS}' }],
      ['vscode', '.config/Code/User/mcp.json', 'servers', { TEAM_DOCS: '${env:TEAM_DOCS}' }],
      ['claude', '.config/Claude/claude_desktop_config.json', 'mcpServers', undefined],
    ];
    // Every run below has a home of its own: they run at once, and each is checked as it was.
    writeTree(dir, {
      'broken.yaml': 'sources:\n  - type: files\n    root: ./nowhere\n',
      'served.yaml': `sources:\n  - type: files\n    root: "\${TEAM_DOCS}"\nserver:\n  http:\n    port: 7399\n`,
      // A repeated key, which JSON.parse (the loader's reader of .json) lets the last one win.
      'served.json': `{ "sources": [{ "type": "files", "root": "\${TEAM_DOCS}" }], "server": { "http": { "port": 7399 } }, "server": { "http": { "port": 7398 } } }\n`,
    });
    const [runs, set, broken, ...served] = await Promise.all([
      Promise.all(
        cases.map(([host]) =>
          setup(join(dir, `home-config-${host}`), [host, '--config', 'team.yaml']),
        ),
      ),
      // Set where setup runs: validated with it, nothing to pass.
      setup(join(dir, 'home-config-set'), ['cursor', '--config', 'team.yaml'], dir, {
        TEAM_DOCS: docs,
      }),
      // Anything else wrong is refused with the validator's words, and nothing is written.
      setup(join(dir, 'home-config-broken'), ['cursor', '--config', 'broken.yaml']),
      // A config that serves HTTP would never answer the host over stdio: refused whether it
      // validates here or a variable only the host sets stops it.
      setup(join(dir, 'home-config-served'), ['cursor', '--config', 'served.yaml']),
      setup(join(dir, 'home-config-served'), ['cursor', '--config', 'served.yaml'], dir, {
        TEAM_DOCS: docs,
      }),
      setup(join(dir, 'home-config-served'), ['cursor', '--config', 'served.json']),
    ]);
    cases.forEach(([host, file, key, env], i) => {
      const run = runs[i]!;
      const home = join(dir, `home-config-${host}`);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain('the config uses TEAM_DOCS, not set here');
      const entry = readJson(join(home, file))[key]!['reservoir']! as {
        args: string[];
        env?: unknown;
      };
      expect(entry.args).toEqual([CLI_PATH, 'serve', '--config', config]);
      expect(entry.env).toEqual(env);
    });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stderr).toBe('');
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain(`--config: ${join(dir, 'broken.yaml')} is not a valid config:`);
    expect(existsSync(join(dir, 'home-config-broken'))).toBe(false);
    served.forEach((run, i) => {
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toContain(
        `--config: ${join(dir, i === 2 ? 'served.json' : 'served.yaml')} serves Streamable HTTP (server.http), but a host entry starts Reservoir over stdio`,
      );
    });
    expect(existsSync(join(dir, 'home-config-served'))).toBe(false);
  });

  it('writes a project file with --project and names the entry with --name', async () => {
    const home = join(dir, 'home-project');
    const run = await setup(home, ['vscode', 'docs', '--project', '.', '--name', 'team-docs']);
    expect(run.code, run.stderr).toBe(0);
    expect(readJson(join(dir, '.vscode/mcp.json'))['servers']!['team-docs']!.args).toEqual([
      CLI_PATH,
      'serve',
      docs,
    ]);
  });

  it('prints the entry and the file it belongs in with --print, writing nothing', async () => {
    const home = join(dir, 'home-print');
    const run = await setup(home, ['claude', 'docs', '--print']);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe(
      `# Claude Desktop reads ${join(home, '.config/Claude/claude_desktop_config.json')}; merge this into it:\n`,
    );
    expect(JSON.parse(run.stdout)).toEqual({
      mcpServers: { reservoir: { command: process.execPath, args: [CLI_PATH, 'serve', docs] } },
    });
    expect(existsSync(home)).toBe(false);
  });

  it('refuses no directory, a missing one, a file, an unknown host and a host file that is not plain JSON', async () => {
    const home = join(dir, 'home-bad');
    writeTree(home, { '.cursor/mcp.json': '{ // a comment\n "mcpServers": {} }\n' });
    const cases: [string[], string][] = [
      [
        ['claude'],
        'roots: name the directories the host may read (e.g. reservoir setup claude ~/notes ~/src), or --config FILE',
      ],
      [['claude', 'nowhere'], `root: ${join(dir, 'nowhere')} does not exist`],
      [['claude', 'plain.txt'], `root: ${join(dir, 'plain.txt')} is not a directory`],
      [
        ['zed', 'docs'],
        "argument value 'zed' is invalid for argument 'host'. Allowed choices are claude, claude-code, vscode, cursor, gemini, codex.",
      ],
      [['claude', 'docs', '--project', '.'], '--project: Claude Desktop has no per-project file'],
      [['cursor', 'docs'], `${join(home, '.cursor/mcp.json')}: is not plain JSON`],
    ];
    for (const [args, message] of cases) {
      const run = await setup(home, args);
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.stderr, args.join(' ')).toContain(message);
      expect(run.stdout, args.join(' ')).toBe('');
    }
    expect(readFileSync(join(home, '.cursor/mcp.json'), 'utf8')).toBe(
      '{ // a comment\n "mcpServers": {} }\n',
    );
  });
});

describe.each(ERAS)('the written entry, %s era', (era) => {
  it('starts a server the SDK client reads the named directory from', async () => {
    const home = join(dir, `home-run-${era}`);
    expect((await setup(home, ['claude', 'docs'])).code).toBe(0);
    const entry = readJson(join(home, '.config/Claude/claude_desktop_config.json'))['mcpServers']![
      'reservoir'
    ]!;
    // As a host does: the command and args exactly as written, from an unrelated directory.
    const transport = new StdioClientTransport({
      command: entry.command,
      args: entry.args,
      cwd: '/',
      stderr: 'pipe',
    });
    const client: Client = newClient(era);
    cleanup.add(() => client.close());
    await client.connect(transport);
    const read = await client.readResource({ uri: fileUri(docs, 'a.md') });
    expect(read.contents[0]).toMatchObject({ text: '# a\n' });
    await client.close();
  });
});
