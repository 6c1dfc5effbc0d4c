// Pins that the package is ready to publish: the tarball holds exactly the built code (no source
// maps pointing at sources it does not ship, no test files), the LICENSE, docs, schema and deploy
// examples; package.json names its repository, home page and issue tracker; the schema an editor's
// `$schema` points at resolves from the installed package (`reservoir schema --path`); and a
// PostgreSQL source without its optional driver refuses to start with the command that installs it.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { requireSqlDrivers } from '../../src/providers/sql/drivers.js';
import { CLI_PATH, ensureBuilt, REPO_ROOT } from '../helpers/build.js';

const run = promisify(execFile);

beforeAll(() => ensureBuilt());

describe('the npm package', () => {
  it('packs exactly dist (without source maps), README, LICENSE, docs, schema and deploy', async () => {
    // --ignore-scripts: prepack rebuilds dist from scratch, which other test files are using.
    const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: REPO_ROOT, timeout: 60_000 });
    const [pack] = JSON.parse(stdout) as [{ files: { path: string }[] }];
    const paths = pack.files.map((f) => f.path);
    const top = new Set(paths.map((p) => p.split('/')[0]));
    expect([...top].sort()).toEqual(['LICENSE', 'README.md', 'deploy', 'dist', 'docs', 'package.json', 'schema']);
    expect(paths).toContain('dist/cli/index.js');
    expect(paths).toContain('schema/reservoir.schema.json');
    expect(paths.filter((p) => p.endsWith('.map') || p.includes('.e2e-build.lock'))).toEqual([]);
  });

  it('names its license, repository, home page and issue tracker, and keeps the PostgreSQL driver optional', () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      license: string;
      homepage: string;
      repository: { url: string };
      bugs: { url: string };
      dependencies: Record<string, string>;
      optionalDependencies: Record<string, string>;
    };
    expect(readFileSync(join(REPO_ROOT, 'LICENSE'), 'utf8')).toContain('MIT License');
    expect(pkg.license).toBe('MIT');
    expect(pkg.repository.url).toMatch(/^git\+https:\/\//);
    expect(pkg.homepage).toMatch(/^https:\/\//);
    expect(pkg.bugs.url).toMatch(/^https:\/\//);
    expect(Object.keys(pkg.optionalDependencies)).toEqual(['pg', 'pg-cursor']);
    expect(pkg.dependencies).toHaveProperty('better-sqlite3');
    expect(pkg.dependencies).not.toHaveProperty('pg');
  });

  it('prints the path of the schema file it ships, which exists and is the schema `reservoir schema` prints', async () => {
    const { stdout: path } = await run(process.execPath, [CLI_PATH, 'schema', '--path']);
    expect(path.trim()).toBe(join(REPO_ROOT, 'schema', 'reservoir.schema.json'));
    expect(existsSync(path.trim())).toBe(true);
    const { stdout: schema } = await run(process.execPath, [CLI_PATH, 'schema']);
    expect(readFileSync(path.trim(), 'utf8')).toBe(schema);
  });
});

describe('optional SQL drivers', () => {
  const missing = (gone: string[]) => (name: string): string => {
    if (gone.includes(name)) throw Object.assign(new Error(`Cannot find module '${name}'`), { code: 'MODULE_NOT_FOUND' });
    return `/x/${name}`;
  };

  it('refuses a PostgreSQL source without pg and pg-cursor, naming the field and the install command', () => {
    expect(() => requireSqlDrivers('postgres', 'sources[2]', missing(['pg', 'pg-cursor']))).toThrow(
      'sources[2]: a PostgreSQL source needs the pg and pg-cursor packages, which are not installed; install them where mcp-reservoir is installed: npm install pg pg-cursor (add -g for a global install)',
    );
    expect(() => requireSqlDrivers('postgres', 'sources[0]', missing(['pg-cursor']))).toThrow('needs the pg-cursor package, which is not installed; install it where mcp-reservoir is installed: npm install pg-cursor');
  });

  it('accepts a source whose drivers are installed (as they are here)', () => {
    expect(() => requireSqlDrivers('postgres', 'sources[0]')).not.toThrow();
    expect(() => requireSqlDrivers('sqlite', 'sources[0]')).not.toThrow();
  });
});
