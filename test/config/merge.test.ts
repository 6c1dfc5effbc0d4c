// Pins how the command line and a config file combine: the config is the base, each option given
// explicitly on the command line replaces the matching one (source options on every files
// source), and command-line roots are served after the config's sources.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type LoadedConfig } from '../../src/config/load.js';
import { mergeSettings } from '../../src/config/merge.js';
import { defaultStateDir } from '../../src/search/state-dir.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';

let dir: string;
let config: LoadedConfig;

beforeAll(() => {
  dir = makeTempDir('reservoir-merge-');
  for (const sub of ['docs', 'notes', 'extra']) mkdirSync(join(dir, sub));
  writeFileSync(
    join(dir, 'reservoir.yaml'),
    [
      'sources:',
      '  - { type: files, root: docs, exclude: ["*.tmp"], maxReadBytes: 1000 }',
      '  - { type: files, root: notes, gitignore: false, watch: poll, secretPatterns: ["*.token", "!*.pem"] }',
      'server:',
      '  pageSize: 50',
      '  logLevel: debug',
      '  http: { host: 0.0.0.0, port: 8080, allowedHosts: [docs.example], maxBodyBytes: 2048 }',
    ].join('\n'),
  );
  config = loadConfig(join(dir, 'reservoir.yaml'), { env: {} });
});

afterAll(() => removeTree(dir));

describe('mergeSettings', () => {
  it('takes everything from the config when the command line gives nothing', () => {
    const hidden = { hide: [config.file], hideDirectories: [defaultStateDir()] };
    expect(mergeSettings(config, { roots: [], source: {} })).toEqual({
      sources: [
        {
          root: join(dir, 'docs'),
          origin: 'sources[0]',
          gitignore: true,
          includeGitDir: false,
          exclude: ['*.tmp'],
          maxReadBytes: 1000,
          watch: 'native',
          allowHardlinks: false,
          serveSecrets: false,
          secretPatterns: [],
          ...hidden,
        },
        {
          root: join(dir, 'notes'),
          origin: 'sources[1]',
          gitignore: false,
          includeGitDir: false,
          exclude: [],
          watch: 'poll',
          allowHardlinks: false,
          serveSecrets: false,
          secretPatterns: ['*.token', '!*.pem'],
          ...hidden,
        },
      ],
      otherSources: [],
      skills: [],
      reserved: [
        { path: defaultStateDir(), what: 'state directory', directory: true },
        { path: config.file, what: 'config file', directory: false },
      ],
      pageSize: 50,
      logLevel: 'debug',
      http: {
        host: '0.0.0.0',
        port: 8080,
        allowedHosts: ['docs.example'],
        maxBodyBytes: 2048,
        ui: true,
        sse: true,
      },
    });
  });

  it("lets --serve-secrets serve secrets on every files source, keeping each source's secret patterns", () => {
    const merged = mergeSettings(config, {
      roots: [join(dir, 'extra')],
      source: { serveSecrets: true },
    });
    expect(merged.sources.map((s) => [s.serveSecrets, s.secretPatterns])).toEqual([
      [true, []],
      [true, ['*.token', '!*.pem']],
      [true, []],
    ]);
  });

  it('takes the shutdown grace period from the config, and --shutdown-grace-ms over it (0 included)', () => {
    const file = join(dir, 'grace.yaml');
    writeFileSync(
      file,
      'sources:\n  - { type: files, root: docs }\nserver:\n  shutdownGraceMs: 2500\n',
    );
    const graced = loadConfig(file, { env: {} });
    expect(mergeSettings(graced, { roots: [], source: {} }).shutdownGraceMs).toBe(2500);
    expect(
      mergeSettings(graced, { roots: [], source: {}, shutdownGraceMs: 0 }).shutdownGraceMs,
    ).toBe(0);
    expect(mergeSettings(config, { roots: [], source: {} }).shutdownGraceMs).toBeUndefined();
  });

  it("serves --skills DIR alone without the default root, after the config's catalogs", () => {
    const settings = mergeSettings(undefined, {
      roots: [],
      source: {},
      skills: ['team-skills'],
      cwd: dir,
    });
    expect({ sources: settings.sources, skills: settings.skills }).toEqual({
      sources: [],
      skills: [
        {
          source: { type: 'files', root: join(dir, 'team-skills') },
          origin: '--skills team-skills',
        },
      ],
    });
  });

  it('lets each explicit flag replace the matching option, source options on every files source', () => {
    const settings = mergeSettings(config, {
      roots: [],
      source: { exclude: ['*.log'], watch: 'native', gitignore: true, maxReadBytes: 5 },
      pageSize: 10,
      logLevel: 'warn',
      http: { host: '127.0.0.1', port: 0 },
      allowedHosts: [],
      maxBodyBytes: 99,
    });
    expect(settings.sources.map((s) => [s.exclude, s.watch, s.gitignore, s.maxReadBytes])).toEqual([
      [['*.log'], 'native', true, 5],
      [['*.log'], 'native', true, 5],
    ]);
    expect(settings).toMatchObject({
      pageSize: 10,
      logLevel: 'warn',
      http: { host: '127.0.0.1', port: 0, allowedHosts: [], maxBodyBytes: 99 },
    });
  });

  it('serves command-line roots after the config sources, with the command-line source options', () => {
    const settings = mergeSettings(config, {
      roots: ['extra'],
      source: { includeGitDir: true },
      cwd: dir,
    });
    expect(settings.sources.map((s) => [s.origin, s.root, s.includeGitDir, s.exclude])).toEqual([
      ['sources[0]', join(dir, 'docs'), true, ['*.tmp']],
      ['sources[1]', join(dir, 'notes'), true, []],
      ['command line', join(dir, 'extra'), true, []],
    ]);
  });

  it('keeps the config address for a bare --http', () => {
    expect(mergeSettings(config, { roots: [], source: {}, http: true }).http).toMatchObject({
      host: '0.0.0.0',
      port: 8080,
    });
    const none = mergeSettings(undefined, { roots: [dir], source: {}, http: true });
    expect(none.http).toEqual({
      host: '127.0.0.1',
      port: 7337,
      allowedHosts: [],
      ui: true,
      sse: true,
    });
    expect(
      mergeSettings(undefined, { roots: [dir], source: {}, http: true, ui: false }).http?.ui,
    ).toBe(false);
  });

  it('serves the working directory only when there is neither a config nor a root', () => {
    expect(
      mergeSettings(undefined, { roots: [], source: {}, cwd: dir }).sources.map((s) => s.root),
    ).toEqual([dir]);
    expect(mergeSettings(config, { roots: [], source: {} }).sources).toHaveLength(2);
    expect(mergeSettings(undefined, { roots: [], source: {} })).toMatchObject({ logLevel: 'info' });
  });

  it('serves only the repository for --git without roots or config, not the working directory', () => {
    const settings = mergeSettings(undefined, { roots: [], source: {}, cwd: dir, git: ['repo'] });
    expect(settings.sources).toEqual([]);
    expect(settings.otherSources).toEqual([
      { index: Number.MAX_SAFE_INTEGER, config: { type: 'git', path: join(dir, 'repo') } },
    ]);
    expect(
      mergeSettings(undefined, { roots: ['.'], source: {}, cwd: dir, git: ['repo'] }).sources.map(
        (s) => s.root,
      ),
    ).toEqual([dir]);
  });

  it('hides the config file from every files source, command-line roots included, and from none without a config', () => {
    const settings = mergeSettings(config, { roots: [join(dir, 'extra')], source: {} });
    expect(settings.sources.map((s) => s.hide)).toEqual([
      [config.file],
      [config.file],
      [config.file],
    ]);
    expect(
      mergeSettings(undefined, { roots: [], source: {}, cwd: dir }).sources.map((s) => s.hide),
    ).toEqual([[]]);
  });

  it('hides what Reservoir keeps from every files source: state dir, TLS pair, secret file, audit log and its rotations', () => {
    writeFileSync(
      join(dir, 'kept.yaml'),
      [
        'sources:',
        '  - { type: files, root: docs }',
        'server:',
        '  stateDir: state',
        '  audit: { sink: file, path: audit.log, keep: 2 }',
      ].join('\n'),
    );
    const kept = loadConfig(join(dir, 'kept.yaml'), { env: {} });
    const cwd = join(dir, 'extra');
    const settings = mergeSettings(kept, {
      roots: [],
      source: {},
      cwd,
      secretFile: 'secret',
      tls: { cert: 'c.pem', key: 'k.pem' },
    });
    const expected = {
      hide: [
        kept.file,
        join(cwd, 'k.pem'),
        join(cwd, 'c.pem'),
        join(cwd, 'secret'),
        join(cwd, 'audit.log'),
        join(cwd, 'audit.log.1'),
        join(cwd, 'audit.log.2'),
      ],
      hideDirectories: [join(dir, 'state')],
    };
    expect(
      settings.sources.map((s) => ({ hide: s.hide, hideDirectories: s.hideDirectories })),
    ).toEqual([expected]);
    // --state-dir replaces server.stateDir, resolved against the working directory.
    expect(
      mergeSettings(kept, { roots: [], source: {}, cwd, stateDir: '../elsewhere' }).sources[0]!
        .hideDirectories,
    ).toEqual([join(dir, 'elsewhere')]);
  });

  it('refuses a command-line root that overlaps a config source, naming both', () => {
    expect(() => mergeSettings(config, { roots: [join(dir, 'docs')], source: {} })).toThrow(
      `root: ${join(dir, 'docs')} (${join(dir, 'docs')}) overlaps sources[0].root (${join(dir, 'docs')}); serve the outer one only`,
    );
  });
});
