// Pins that the package is ready to publish: the tarball holds exactly the built code (no source
// maps pointing at sources it does not ship, no test files), the LICENSE, docs, schema and deploy
// examples; package.json names its repository, home page and issue tracker; the schema an editor's
// `$schema` points at resolves from the installed package (`reservoir schema --path`, and the
// documented `./node_modules/mcp-reservoir/...` path in a project where the packed tarball is
// unpacked as npm installs it, loaded by ajv as an editor would); `npm publish --dry-run` is clean; and a
// PostgreSQL source without its optional driver refuses to start with the command that installs it.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse as parseYaml } from 'yaml';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { requireSqlDrivers } from '../../src/providers/sql/drivers.js';
import { CLI_PATH, ensureBuilt, REPO_ROOT } from '../helpers/build.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';

const run = promisify(execFile);

beforeAll(() => ensureBuilt());

// npm pack and publish --dry-run walk the whole tree: seconds alone, over a minute beside a loaded
// suite (seen at load 25). The bounds below are ceilings for a hung npm, never speed claims.
describe('the npm package', { timeout: 200_000 }, () => {
  it('packs exactly dist (without source maps), README, LICENSE, docs, schema and deploy', async () => {
    // --ignore-scripts: prepack rebuilds dist from scratch, which other test files are using.
    const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: REPO_ROOT,
      timeout: 180_000,
    });
    const [pack] = JSON.parse(stdout) as [{ files: { path: string }[] }];
    const paths = pack.files.map((f) => f.path);
    const top = new Set(paths.map((p) => p.split('/')[0]));
    expect([...top].sort()).toEqual([
      'LICENSE',
      'README.md',
      'deploy',
      'dist',
      'docs',
      'package.json',
      'schema',
    ]);
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
    // Drivers and the document converters load only when a source or a document needs them.
    expect(Object.keys(pkg.optionalDependencies)).toEqual([
      'better-sqlite3-13',
      'exceljs',
      'fflate',
      'mammoth',
      'mysql2',
      'node-html-markdown',
      'pdfjs-dist',
      'pg',
    ]);
    expect(pkg.dependencies).toHaveProperty('better-sqlite3');
    // better-sqlite3 13 under an alias, for Node 22 and later (src/core/sqlite-driver.ts).
    expect(pkg.optionalDependencies['better-sqlite3-13']).toMatch(/^npm:better-sqlite3@\^13\./);
    expect(pkg.dependencies).not.toHaveProperty('pg');
    expect(pkg.dependencies).not.toHaveProperty('mysql2');
  });

  it('prints the path of the schema file it ships, which exists and is the schema `reservoir schema` prints', async () => {
    const { stdout: path } = await run(process.execPath, [CLI_PATH, 'schema', '--path']);
    expect(path.trim()).toBe(join(REPO_ROOT, 'schema', 'reservoir.schema.json'));
    expect(existsSync(path.trim())).toBe(true);
    const { stdout: schema } = await run(process.execPath, [CLI_PATH, 'schema']);
    expect(readFileSync(path.trim(), 'utf8')).toBe(schema);
  });
});

describe('$schema references, as an editor resolves them from an installed tarball', () => {
  /** The schema a config file names (JSON `$schema`, or the yaml-language-server modeline), loaded by path as an editor does. */
  function schemaNamedBy(configPath: string): Record<string, unknown> {
    const text = readFileSync(configPath, 'utf8');
    const ref = configPath.endsWith('.json')
      ? (JSON.parse(text) as { $schema: string }).$schema
      : /^# yaml-language-server: \$schema=(\S+)/.exec(text)?.[1];
    if (ref === undefined) throw new Error(`${configPath} names no schema`);
    return JSON.parse(readFileSync(resolve(dirname(configPath), ref), 'utf8')) as Record<
      string,
      unknown
    >;
  }

  /** The documented references (README and docs/config.md), which must all name the installed copy. */
  function documentedReferences(): string[] {
    const refs = new Set<string>();
    for (const file of ['README.md', 'docs/config.md']) {
      const text = readFileSync(join(REPO_ROOT, file), 'utf8');
      for (const match of text.matchAll(/\$schema[=":\s]+"?(\.\/[^\s"`]+)/g)) refs.add(match[1]!);
    }
    return [...refs].sort();
  }

  it('names the installed copy in every doc, and has an $id that claims no URL', () => {
    expect(documentedReferences()).toEqual([
      './node_modules/mcp-reservoir/schema/reservoir.schema.json',
      './reservoir.schema.json',
    ]);
    const schema = JSON.parse(
      readFileSync(join(REPO_ROOT, 'schema/reservoir.schema.json'), 'utf8'),
    ) as { $id: string };
    expect(schema.$id).toBe('urn:mcp-reservoir:config-schema');
  });

  it('resolves the documented path in a project with the packed tarball installed, and ajv validates a config with it (and refuses a bad one)', async () => {
    const project = makeTempDir('reservoir-schema-project-');
    try {
      const { stdout } = await run(
        'npm',
        ['pack', '--json', '--ignore-scripts', '--pack-destination', project],
        { cwd: REPO_ROOT, timeout: 180_000 },
      );
      const [{ filename }] = JSON.parse(stdout) as [{ filename: string }];
      const installed = join(project, 'node_modules', 'mcp-reservoir');
      mkdirSync(installed, { recursive: true });
      await run('tar', ['-xzf', join(project, filename), '-C', installed, '--strip-components=1']);
      writeFileSync(
        join(project, 'reservoir.yaml'),
        '# yaml-language-server: $schema=./node_modules/mcp-reservoir/schema/reservoir.schema.json\nsources:\n  - type: files\n    root: ./docs\nserver:\n  http: { host: 127.0.0.1, port: 7337 }\n',
      );
      writeFileSync(
        join(project, 'reservoir.json'),
        JSON.stringify({
          $schema: './node_modules/mcp-reservoir/schema/reservoir.schema.json',
          sources: [{ type: 'files', root: 'docs' }],
        }),
      );
      const ajv = new Ajv2020({ strict: false });
      for (const [name, parse] of [
        ['reservoir.yaml', (text: string): unknown => parseYaml(text)],
        ['reservoir.json', (text: string): unknown => JSON.parse(text)],
      ] as const) {
        const validate =
          ajv.getSchema('urn:mcp-reservoir:config-schema') ??
          ajv.compile(schemaNamedBy(join(project, name)));
        const config = parse(readFileSync(join(project, name), 'utf8')) as Record<string, unknown>;
        expect(validate(config), `${name}: ${JSON.stringify(validate.errors)}`).toBe(true);
        expect(validate({ ...config, sources: [{ type: 'files', rooot: 'docs' }] })).toBe(false);
      }
    } finally {
      removeTree(project);
    }
  });

  it('publishes cleanly (npm publish --dry-run: no corrected or invalid package.json fields)', async () => {
    const { stdout, stderr } = await run('npm', ['publish', '--dry-run', '--ignore-scripts'], {
      cwd: REPO_ROOT,
      timeout: 180_000,
    });
    const output = `${stdout}\n${stderr}`;
    expect(output).toContain('mcp-reservoir@');
    expect(
      output
        .split('\n')
        .filter(
          (line) => !line.startsWith('npm notice') && /auto-corrected|invalid|error/i.test(line),
        ),
    ).toEqual([]);
  });
});

describe('optional SQL drivers', () => {
  const missing =
    (gone: string[]) =>
    (name: string): string => {
      if (gone.includes(name))
        throw Object.assign(new Error(`Cannot find module '${name}'`), {
          code: 'MODULE_NOT_FOUND',
        });
      return `/x/${name}`;
    };

  it('refuses a MySQL / MariaDB source without mysql2, naming the field and the install command', () => {
    expect(() => requireSqlDrivers('mysql', 'sources[1]', missing(['mysql2']))).toThrow(
      'sources[1]: a MySQL / MariaDB source needs the mysql2 package, which is not installed; install it where mcp-reservoir is installed: npm install mysql2 (add -g for a global install)',
    );
    expect(() => requireSqlDrivers('mysql', 'sources[1]', missing(['pg']))).not.toThrow();
  });

  it('refuses a PostgreSQL source without pg, naming the field and the install command', () => {
    expect(() => requireSqlDrivers('postgres', 'sources[2]', missing(['pg']))).toThrow(
      'sources[2]: a PostgreSQL source needs the pg package, which is not installed; install it where mcp-reservoir is installed: npm install pg (add -g for a global install)',
    );
    expect(() => requireSqlDrivers('postgres', 'sources[0]', missing(['pg-cursor']))).not.toThrow();
  });

  it('accepts a source whose drivers are installed (as they are here)', () => {
    expect(() => requireSqlDrivers('postgres', 'sources[0]')).not.toThrow();
    expect(() => requireSqlDrivers('sqlite', 'sources[0]')).not.toThrow();
  });
});
