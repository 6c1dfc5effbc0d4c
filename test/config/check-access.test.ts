// `reservoir check` warns about every access rule that can match nothing — a scheme no source
// serves, a source name that does not exist (or differs only in case), a path outside every root,
// a pattern without a scheme — and about patterns read other than they look (a % that begins no
// escape, bytes no UTF-8 name holds, a [ or { that never closes, a backwards range), naming the
// rule's field and pattern. The file stays valid (exit 0); a config whose rules all can match
// something, written in any spelling of the names, gets no warning at all. A read deny under a SQL
// source with `queryTool: true` is told to keep that source's query tool from the rule's principals.
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli } from '../helpers/build.js';
import { dirUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';

const Database = loadSqliteDriver();

let dir: string;
let docs: string;

const SOURCES = 'sources:\n  - type: files\n    root: docs\n  - type: sql\n    path: notes.db\n';
const rules = (patterns: string[]): string =>
  `${SOURCES}access:\n  rules:\n    - principals: ['token:a']\n      deny: ${JSON.stringify(patterns)}\n`;

beforeAll(async () => {
  await ensureBuilt();
  dir = makeTempDir('reservoir-check-access-');
  writeTree(dir, { 'docs/café/a.md': 'a\n', 'docs/my docs/b.md': 'b\n', 'docs/100%/c.md': 'c\n' });
  const db = new Database(join(dir, 'notes.db'));
  db.exec('CREATE TABLE t (a TEXT)');
  db.close();
  docs = dirUri(join(dir, 'docs'));
});

afterAll(() => removeTree(dir));

describe('reservoir check on access rules', () => {
  it('passes rules that can match something, in every spelling, without a warning', async () => {
    const good = [
      `${docs}café/**`,
      `${docs}caf%C3%A9/**`,
      `${docs}cafe\u0301/**`,
      `${docs}my docs/**`,
      `${docs}my%20docs/**`,
      `${docs}100%/**`,
      `${docs}100%25/**`,
      `${docs}a\\*b`,
      `${docs.replace('file:', 'FILE:')}**`,
      `${docs.slice(0, -1)}`,
      'file:///**/café/**',
      '**/*.md',
      '**',
      'db://notes/**',
      'db://*/tables/**',
      'tool:*',
      'prompt:summarise',
    ];
    writeTree(dir, { 'good.yaml': rules(good) });
    const run = await runCli(['check', '--config', 'good.yaml'], dir);
    expect(run).toEqual({
      code: 0,
      stdout: 'good.yaml: valid (2 sources, 0 prompts; serves stdio)\n',
      stderr: '',
    });
  });

  it('warns about each rule that can match nothing, saying which and why, and still exits 0', async () => {
    const bad = [
      's3://bucket/**',
      'db://nots/**',
      'db://Notes/**',
      'file:///elsewhere/**',
      'docs/**',
      `${docs}%zz/**`,
      `${docs}%FF/**`,
      `${docs}[draft/**`,
      `${docs}{a/**`,
      `${docs}[z-a]*`,
      'https://exa mple.com/**',
    ];
    writeTree(dir, { 'bad.yaml': rules(bad) });
    const run = await runCli(['check', '--config', 'bad.yaml'], dir);
    const at = (i: number): string => `warning: access.rules[0].deny[${i}] '${bad[i]}'`;
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('bad.yaml: valid (2 sources, 0 prompts; serves stdio)\n');
    expect(run.stderr.split('\n')).toEqual([
      `${at(0)} can match nothing: no source serves s3: URIs (served: file:, db:)`,
      `${at(1)} can match nothing: no db: source is named 'nots' (sources: 'notes')`,
      `${at(2)} can match nothing: no source is named 'Notes'; db: source names are case-sensitive, did you mean 'notes'?`,
      `${at(3)} can match nothing: its literal beginning file:///elsewhere/ lies outside every file: source root (${docs})`,
      `${at(4)} can match nothing: every URI begins with a scheme (file:///…, git://…); start the pattern with one, or with ** to match any`,
      `${at(5)}: '%zz' is not a percent-escape (two hex digits after %): it is read as a literal '%'; write %25 for a percent sign`,
      `${at(6)}: '%FF' is not part of any UTF-8 character, so no name holds it`,
      `${at(7)}: '[' opens a character set that never closes: it is read as a literal '['; write %5B to say so`,
      `${at(8)}: '{' opens alternatives that never close: it is read as a literal '{'; write %7B to say so`,
      `${at(9)}: the range 'z-a' in '[z-a]' runs backwards and matches nothing`,
      `${at(10)}: 'exa mple.com' is not a valid host for https: URIs`,
      `${at(10)} can match nothing: no source serves https: URIs (served: file:, db:)`,
      '',
    ]);
  });

  it('says that a read deny under a source with a query tool keeps the tool from its principals', async () => {
    writeTree(dir, {
      'tool.yaml': [
        'sources:',
        '  - type: files',
        '    root: docs',
        '  - type: sql',
        '    path: notes.db',
        '    queryTool: true',
        'access:',
        '  rules:',
        "    - principals: ['token:a']",
        "      allow: ['db://notes/**', 'tool:*']",
        "      deny: ['db://notes/tables/t/**', 'db://*/tables/secret*/**', '" + docs + "café/**']",
        "    - principals: ['token:a']",
        '      operations: [list]',
        "      deny: ['db://notes/tables/hidden/**']",
        '',
      ].join('\n'),
    });
    const run = await runCli(['check', '--config', 'tool.yaml'], dir);
    expect(run.code).toBe(0);
    const keeps = (pattern: string, i: number): string =>
      `warning: access.rules[0].deny[${i}] '${pattern}' also keeps the tool sql_query_notes from the principals this rule applies to: the tool can read anything under db://notes/, so only a principal that may read all of it is offered the tool (docs/auth.md, Query tools)`;
    expect(run.stderr.split('\n')).toEqual([
      keeps('db://notes/tables/t/**', 0),
      keeps('db://*/tables/secret*/**', 1),
      '',
    ]);
  });
});
