/**
 * The alias fixture of the security matrix: one server with a files root, a git repository, a
 * SQLite database, an HTTP API and an S3 bucket (on a local S3 API server), each holding one secret resource and one public one; and, for
 * each of those resources, every spelling its provider accepts for it (a trailing slash, each
 * template query, percent-encoding variants, dot segments the URI normaliser folds, refs and
 * commit ids, scheme case). Rule sets deny the secret in each style a rule can take (exact URI,
 * `*.ext`, `**` with an extension, a directory) or allow only the public resources by exact URI
 * (which grants their spellings at the listed git ref, not their versions at other refs).
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import { AccessPolicy, type AccessRule } from '../../src/core/access.js';
import type { Prompt } from '../../src/core/prompts.js';
import { gitProvider } from '../../src/providers/git/index.js';
import { httpProvider } from '../../src/providers/http/index.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { sqlProvider } from '../../src/providers/sql/index.js';
import { s3Provider } from '../../src/providers/s3/index.js';
import { LocalS3 } from '../providers/s3-server.js';
import type { Provider } from '../../src/core/types.js';
import { dirUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { commit, git, makeRepo } from '../providers/git-helpers.js';
import { json, Upstream } from '../providers/http-upstream.js';

const Database = loadSqliteDriver();

export const SECRET = `ALIAS-SECRET-${randomBytes(6).toString('hex')}`;
export const PUBLIC = 'public-content';

export type SourceKind = 'files' | 'git' | 'sql' | 'http' | 's3';
export const SOURCES: readonly SourceKind[] = ['files', 'git', 'sql', 'http', 's3'];

/** A resource and every spelling of it a client can read. */
export interface Aliased {
  source: SourceKind;
  canonical: string;
  /** The canonical URI first, then every other spelling the provider accepts. */
  spellings: string[];
  /** The spellings that also select another version (a git ref): rules name those by their ref too. */
  versions: string[];
}

/** A completion that must offer the secret's name to the admin and never to a restricted principal. */
export interface CompletionProbe {
  source: SourceKind;
  template: string;
  argument: string;
  value: string;
  context?: Record<string, string>;
  /** The value naming the secret (or the directory holding it). */
  secretValue: string;
}

export interface Fixture {
  providers: Provider[];
  prompts: Prompt[];
  secrets: Record<SourceKind, Aliased>;
  publics: Record<SourceKind, Aliased>;
  /** Directory spellings of the files secret's directory (refused under a directory rule). */
  secretDirectory: string[];
  completions: CompletionProbe[];
  /** Deny rules by style; each denies every source's secret. */
  styles: Record<RuleStyle, string[]>;
  /** Allow rules naming exactly each public resource's canonical URI. */
  exactAllows: string[];
  close(): Promise<void>;
}

export type RuleStyle = 'exact' | 'star-ext' | 'globstar-ext' | 'directory';
export const RULE_STYLES: readonly RuleStyle[] = ['exact', 'star-ext', 'globstar-ext', 'directory'];

/** Every spelling of a file URI under `base` (a directory URI) the files provider reads. */
function fileSpellings(base: string, dir: string, name: string): string[] {
  const path = base.slice('file://'.length);
  const first = name[0]!;
  const hex = first.charCodeAt(0).toString(16);
  const dot = name.lastIndexOf('.');
  const uri = `${base}${dir}/${name}`;
  return [
    uri,
    `${uri}/`,
    `${uri}?lines=1-`,
    `${uri}?lines=1`,
    `${uri}?lines=1-1`,
    `${uri}/?lines=1-1`,
    `${base}${dir}/%${hex}${name.slice(1)}`,
    `${base}%${dir.charCodeAt(0).toString(16)}${dir.slice(1)}/${name}`,
    `${base}${dir}/%${hex.toUpperCase()}${name.slice(1)}?lines=1-`,
    `${base}${dir}/${name.slice(0, dot)}%2E${name.slice(dot + 1)}`,
    `${base}${dir}/./${name}`,
    `${base}${dir}/%2e/${name}`,
    `${base}other/../${dir}/${name}`,
    `${base}other/%2E%2E/${dir}/${name}`,
    `${base}${dir}/x/.%2e/${name}`,
    `FILE://${path}${dir}/${name}`,
    `file://localhost${path}${dir}/${name}`,
  ];
}

/** Spellings of a git file at the listed ref `main`, then (`versions`) at other refs. */
function gitSpellings(
  root: string,
  path: string,
  sha: string,
): { same: string[]; versions: string[] } {
  const [dir, name] = path.split('/') as [string, string];
  return {
    same: [
      `${root}main/${path}`,
      `${root}refs%2Fheads%2Fmain/${path}`,
      `${root}main/%${dir.charCodeAt(0).toString(16)}${dir.slice(1)}/${name}`,
      `${root}main/${dir}/./${name}`,
      `${root}main/x/../${path}`,
      `GIT://${root.slice('git://'.length)}main/${path}`,
    ],
    versions: [
      `${root}HEAD/${path}`,
      `${root}${sha}/${path}`,
      `${root}${sha.slice(0, 10)}/${path}`,
      `${root}v1/${path}`,
      `${root}other/${path}`,
      `${root}v1/%${dir.charCodeAt(0).toString(16)}${dir.slice(1)}/${name}`,
    ],
  };
}

function aliased(
  source: SourceKind,
  canonical: string,
  spellings: string[],
  versions: string[] = [],
): Aliased {
  return { source, canonical, spellings: [...spellings, ...versions], versions };
}

function sqlSpellings(root: string, table: string, after: string): string[] {
  const rows = `${root}tables/${table}/rows`;
  return [
    rows,
    `${rows}?`,
    `${rows}?limit=1`,
    `${rows}?format=csv`,
    `${rows}?limit=2&format=json`,
    `${rows}?format=csv&limit=1`,
    `${rows}?after=${after}`,
    `${rows}?after=${after}&format=csv`,
    `${root}tables/%${table.charCodeAt(0).toString(16)}${table.slice(1)}/rows?limit=1`,
    `${root}tables/./${table}/rows`,
    `${root}tables/x/../${table}/rows?format=csv`,
    `DB://${rows.slice('db://'.length)}`,
  ];
}

function httpSpellings(uri: string, query: boolean): string[] {
  const tail = uri.slice(uri.lastIndexOf('/') + 1);
  const head = uri.slice(0, uri.lastIndexOf('/') + 1);
  return [
    uri,
    `${uri}?`,
    ...(query ? [`${uri}?view=full`] : []),
    `${head}${[...tail].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('')}`,
    `${head}./${tail}`,
    `API://${uri.slice('api://'.length)}`,
  ];
}

/** Spellings of an object key (`dir/name`) the s3 provider reads: byte ranges, escapes, an escaped '/', dot segments, scheme case. */
function s3Spellings(root: string, dir: string, name: string): string[] {
  const uri = `${root}${dir}/${name}`;
  const dot = name.lastIndexOf('.');
  return [
    uri,
    `${uri}?bytes=0-`,
    `${uri}?bytes=0-4095`,
    `${root}%${dir.charCodeAt(0).toString(16)}${dir.slice(1)}/${name}`,
    `${root}${dir}/%${name.charCodeAt(0).toString(16).toUpperCase()}${name.slice(1)}?bytes=0-`,
    `${root}${dir}/${name.slice(0, dot)}%2E${name.slice(dot + 1)}`,
    `${root}${dir}%2F${name}`,
    `${root}${dir}%2f${name}?bytes=0-`,
    `${root}${dir}/./${name}`,
    `${root}other/../${dir}/${name}`,
    `S3://${uri.slice('s3://'.length)}`,
  ];
}

/** Builds the five sources; `close` removes what it made. */
export async function makeFixture(): Promise<Fixture> {
  const root = makeTempDir('reservoir-alias-');
  writeTree(root, { 'docs/guide.md': `${PUBLIC} files\n`, 'secret/plan.txt': `${SECRET} files\n` });
  const base = dirUri(root);

  const repo = makeRepo(
    { 'docs/a.md': `${PUBLIC} git\n`, 'secret/plan.txt': `${SECRET} git\n` },
    'reservoir-alias-git-',
  );
  const sha = git(repo, 'rev-parse', 'HEAD');
  git(repo, 'tag', 'v1');
  git(repo, 'branch', 'other');
  commit(repo, { 'docs/b.md': 'later\n' }, 'later on main');

  const dbDir = makeTempDir('reservoir-alias-sql-');
  const dbPath = join(dbDir, 'app.db');
  const db = new Database(dbPath);
  db.exec(
    'CREATE TABLE users (id INTEGER PRIMARY KEY, note TEXT); CREATE TABLE posts (id INTEGER PRIMARY KEY, body TEXT);',
  );
  for (let i = 1; i <= 3; i += 1)
    db.prepare('INSERT INTO users (id, note) VALUES (?, ?)').run(i, `${SECRET} sql ${i}`);
  for (let i = 1; i <= 3; i += 1)
    db.prepare('INSERT INTO posts (id, body) VALUES (?, ?)').run(i, `${PUBLIC} sql ${i}`);
  db.close();

  const upstream = await Upstream.start();
  upstream
    .route('/items/42', json({ secret: `${SECRET} http` }))
    .route('/items/7', json({ body: `${PUBLIC} http item` }))
    .route('/status', json({ body: `${PUBLIC} http` }));

  const s3 = await LocalS3.start();
  await s3.bucket('alias-bucket');
  await s3.put('alias-bucket', 'docs/guide.md', `${PUBLIC} s3\n`);
  await s3.put('alias-bucket', 'secret/plan.txt', `${SECRET} s3\n`);
  const bucket = s3Provider({ ...s3.source('alias-bucket'), pollIntervalMs: 60_000 });

  const files = filesProvider({ root });
  const gitSource = gitProvider({ path: repo, name: 'repo', pollIntervalMs: 60_000 });
  const sql = sqlProvider({ path: dbPath, name: 'app', pollIntervalMs: 60_000 });
  const http = httpProvider({
    name: 'svc',
    baseUrl: `${upstream.origin}/`,
    allowPrivateNetworks: true,
    pollMs: 60_000,
    endpoints: [
      { name: 'status', uri: 'status', upstream: 'status' },
      {
        name: 'item',
        uri: 'items/{id}{?view}',
        upstream: 'items/{id}{?view}',
        complete: { id: ['42', '7'] },
      },
    ],
  });
  // The key of users row 1, as the first page's next link carries it.
  const first = JSON.parse(
    (
      (
        await sql.read('db://app/tables/users/rows?limit=1', {
          signal: new AbortController().signal,
        })
      ).contents[0] as { text: string }
    ).text,
  ) as { next: string };
  const after = new URL(first.next.replace('db://', 'http://')).searchParams.get('after')!;

  const gitSecret = gitSpellings('git://repo/', 'secret/plan.txt', sha);
  const gitPublic = gitSpellings('git://repo/', 'docs/a.md', sha);
  const secrets: Record<SourceKind, Aliased> = {
    files: aliased('files', `${base}secret/plan.txt`, fileSpellings(base, 'secret', 'plan.txt')),
    git: aliased('git', 'git://repo/main/secret/plan.txt', gitSecret.same, gitSecret.versions),
    sql: aliased(
      'sql',
      'db://app/tables/users/rows',
      sqlSpellings('db://app/', 'users', encodeURIComponent(after)),
    ),
    http: aliased('http', 'api://svc/items/42', httpSpellings('api://svc/items/42', true)),
    s3: aliased(
      's3',
      's3://alias-bucket/secret/plan.txt',
      s3Spellings('s3://alias-bucket/', 'secret', 'plan.txt'),
    ),
  };
  const publics: Record<SourceKind, Aliased> = {
    files: aliased('files', `${base}docs/guide.md`, fileSpellings(base, 'docs', 'guide.md')),
    git: aliased('git', 'git://repo/main/docs/a.md', gitPublic.same, gitPublic.versions),
    sql: aliased(
      'sql',
      'db://app/tables/posts/rows',
      sqlSpellings('db://app/', 'posts', encodeURIComponent(after)),
    ),
    http: aliased('http', 'api://svc/status', httpSpellings('api://svc/status', false)),
    s3: aliased(
      's3',
      's3://alias-bucket/docs/guide.md',
      s3Spellings('s3://alias-bucket/', 'docs', 'guide.md'),
    ),
  };

  return {
    providers: [files, gitSource, sql, http, bucket],
    prompts: [
      {
        name: 'embed',
        description: 'Embeds the resource it is given',
        arguments: [{ name: 'uri', required: true }],
        messages: (args) => [
          { role: 'user', content: { type: 'resource_ref', uri: args['uri']! } },
        ],
      },
    ],
    secrets,
    publics,
    secretDirectory: [
      `${base}secret/`,
      `${base}secret`,
      `${base}%73ecret/`,
      `${base}docs/../secret`,
    ],
    completions: [
      {
        source: 'files',
        template: `${base}{+path}`,
        argument: 'path',
        value: 'secret/',
        secretValue: 'secret/plan.txt',
      },
      {
        source: 'files',
        template: `${base}{+path}{?lines}`,
        argument: 'path',
        value: 'secret/pl',
        secretValue: 'secret/plan.txt',
      },
      {
        source: 'git',
        template: 'git://repo/{ref}/{+path}',
        argument: 'path',
        value: 'secret/',
        context: { ref: 'main' },
        secretValue: 'secret/plan.txt',
      },
      {
        source: 'git',
        template: 'git://repo/{ref}/{+path}',
        argument: 'path',
        value: 'secret/',
        context: { ref: 'v1' },
        secretValue: 'secret/plan.txt',
      },
      {
        source: 'sql',
        template: 'db://app/tables/{table}/rows{?after,limit,format}',
        argument: 'table',
        value: 'u',
        secretValue: 'users',
      },
      {
        source: 'http',
        template: 'api://svc/items/{id}{?view}',
        argument: 'id',
        value: '4',
        secretValue: '42',
      },
      {
        source: 's3',
        template: 's3://alias-bucket/{+key}{?bytes}',
        argument: 'key',
        value: 'secret/',
        secretValue: 'secret/plan.txt',
      },
    ],
    styles: {
      exact: [
        `${base}secret/plan.txt`,
        'git://repo/main/secret/plan.txt',
        'db://app/tables/users/rows',
        'api://svc/items/42',
        's3://alias-bucket/secret/plan.txt',
      ],
      'star-ext': [
        `${base}secret/*.txt`,
        'git://repo/main/secret/*.txt',
        'db://app/tables/user*/rows',
        'api://svc/items/4*',
        's3://alias-bucket/secret/*.txt',
      ],
      'globstar-ext': [
        `${base}**/*.txt`,
        'git://repo/**/*.txt',
        'db://app/**/users/rows',
        'api://svc/**/42',
        's3://alias-bucket/**/*.txt',
      ],
      directory: [
        `${base}secret/**`,
        'git://repo/main/secret/**',
        'db://app/tables/users/**',
        'api://svc/items/**',
        's3://alias-bucket/secret/**',
      ],
    },
    exactAllows: Object.values(publics).map((p) => p.canonical),
    async close() {
      await upstream.close();
      await s3.close();
      removeTree(root);
      removeTree(repo);
      removeTree(dbDir);
    },
  };
}

/** Rules: the admin scope may do everything; each style's scope everything but its denies; `exact-allow` only the publics. */
export function aliasPolicy(fixture: Fixture): AccessPolicy {
  const everything = [
    'file:///**',
    'git://**',
    'db://**',
    'api://**',
    's3://**',
    'prompt:*',
    'tool:*',
  ];
  const rules: AccessRule[] = [
    { scopes: ['admin'], allow: everything },
    ...RULE_STYLES.map((style): AccessRule => ({
      scopes: [style],
      allow: everything,
      deny: fixture.styles[style],
    })),
    { scopes: ['exact-allow'], allow: [...fixture.exactAllows, 'prompt:*', 'tool:*'] },
  ];
  return new AccessPolicy({ rules });
}
