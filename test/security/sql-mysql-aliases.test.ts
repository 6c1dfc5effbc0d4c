// Issue 29, item 6: access on a MySQL / MariaDB source is judged on the table a URI names, whatever
// its db:// spelling. A database holds `secret`, `Secret` (a second table: table names are
// case-sensitive where lower_case_table_names = 0, the Linux default) and `pub`; rules deny
// `secret` in each style a rule takes. Every spelling — query variants, a resume position, percent
// escapes, dot segments — is judged as `secret` itself; the MySQL spellings of its identifier
// (backticks, double quotes, schema-qualified, another case, a trailing blank) name tables that do
// not exist, so a read is NotFound for everyone, the admin too, and never reaches `secret`; an
// upper-case authority names no source at all; and a deny of one table never hides the other. Through the registry's one access decision (AccessControl.admits), with
// the provider's own canonical URIs. Skipped without RESERVOIR_TEST_MYSQL.
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessPolicy } from '../../src/core/access.js';
import { NotFoundError } from '../../src/core/errors.js';
import type { Principal } from '../../src/core/principal.js';
import { parseUri } from '../../src/core/uri.js';
import { sqlProvider, type SqlProvider } from '../../src/providers/sql/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { MYSQL_URL, mysqlConfigured } from '../providers/sql-helpers.js';

const suffix = `${process.pid}_${Date.now().toString(36)}`;
const DB = `reservoir_mysql_a_${suffix}`;
const ROOT = 'db://my/';
const SECRET = `${ROOT}tables/secret/rows`;

const STYLES: Record<string, string[]> = {
  exact: [SECRET],
  'star-ext': [`${ROOT}tables/secre*/rows`],
  globstar: [`${ROOT}**/secret/rows`],
  directory: [`${ROOT}tables/secret/**`],
};

const principal = (scope: string): Principal => ({ id: scope, kind: 'token', scopes: [scope] });

describe.skipIf(!mysqlConfigured())(
  'db:// spellings of MySQL identifiers under access rules',
  () => {
    let admin: mysql.Connection;
    let provider: SqlProvider;
    let reservoir: Reservoir;
    let after: string;

    beforeAll(async () => {
      admin = await mysql.createConnection({ uri: MYSQL_URL!, multipleStatements: true });
      await admin.query(`CREATE DATABASE \`${DB}\`; USE \`${DB}\``);
      await admin.query(
        'CREATE TABLE secret (id INT PRIMARY KEY); CREATE TABLE `Secret` (id INT PRIMARY KEY); CREATE TABLE pub (id INT PRIMARY KEY); INSERT INTO secret VALUES (1), (2); INSERT INTO pub VALUES (1)',
      );
      const [[mode]] = (await admin.query('SELECT @@lower_case_table_names AS l')) as unknown as [
        { l: number }[],
      ];
      expect(
        mode!.l,
        'these cases assume case-sensitive table names (lower_case_table_names = 0)',
      ).toBe(0);
      const url = new URL(MYSQL_URL!);
      url.pathname = `/${DB}`;
      provider = sqlProvider({ url: url.href, name: 'my', pollIntervalMs: 60_000 });
      const rules = [
        { scopes: ['admin'], allow: ['db://**'] },
        ...Object.entries(STYLES).map(([style, deny]) => ({
          scopes: [style],
          allow: ['db://**'],
          deny,
        })),
      ];
      reservoir = createReservoir({ providers: [provider], access: new AccessPolicy({ rules }) });
      const first = JSON.parse(
        (
          (await provider.read(`${SECRET}?limit=1`, { signal: new AbortController().signal }))
            .contents[0] as { text: string }
        ).text,
      ) as { next: string };
      after = new URL(first.next.replace('db://', 'http://')).searchParams.get('after')!;
    });

    afterAll(async () => {
      await reservoir?.close();
      await admin?.query(`DROP DATABASE IF EXISTS \`${DB}\``);
      await admin?.end();
    });

    const admits = (scope: string, uri: string): Promise<boolean> =>
      reservoir.registry.access.admits(principal(scope), 'read', parseUri(uri).href);

    it('judges every spelling of the secret table as the table: the admin reads it, every deny style refuses it', async () => {
      const spellings = [
        SECRET,
        `${SECRET}?`,
        `${SECRET}?limit=1`,
        `${SECRET}?format=csv&limit=1`,
        `${SECRET}?after=${encodeURIComponent(after)}`,
        `${ROOT}tables/%73ecret/rows`,
        `${ROOT}tables/./secret/rows`,
        `${ROOT}tables/x/../secret/rows?format=csv`,
      ];
      for (const uri of spellings) {
        expect(await admits('admin', uri), uri).toBe(true);
        for (const style of Object.keys(STYLES))
          expect(await admits(style, uri), `${style}: ${uri}`).toBe(false);
      }
    });

    it('names nothing by the MySQL spellings of the identifier (backticks, quotes, schema-qualified, another case of a missing table)', async () => {
      const none = [
        `${ROOT}tables/%60secret%60/rows`,
        `${ROOT}tables/%22secret%22/rows`,
        `${ROOT}tables/${encodeURIComponent(`${DB}.secret`)}/rows`,
        `${ROOT}tables/SECRET/rows`,
        `${ROOT}tables/secret%20/rows`,
      ];
      for (const uri of none) {
        // judged as a table of that very name (none exists), never as `secret`: a read is NotFound for everyone
        expect(await provider.canonical!(uri, { signal: new AbortController().signal })).not.toBe(
          SECRET,
        );
        await expect(
          provider.read(uri, { signal: new AbortController().signal }),
          uri,
        ).rejects.toBeInstanceOf(NotFoundError);
      }
      // another case of the authority names another source (none): nobody is admitted, the admin neither
      for (const scope of ['admin', ...Object.keys(STYLES)])
        expect(await admits(scope, 'DB://MY/tables/secret/rows'), scope).toBe(false);
    });

    it('keeps `Secret` a table of its own: a deny of `secret` does not hide it, nor reach it', async () => {
      const other = `${ROOT}tables/Secret/rows`;
      expect(await provider.canonical!(other, { signal: new AbortController().signal })).toBe(
        other,
      );
      for (const scope of ['admin', ...Object.keys(STYLES)])
        expect(await admits(scope, other), `${scope}: ${other}`).toBe(true);
      expect(await admits('exact', `${ROOT}tables/pub/rows`)).toBe(true);
    });
  },
);
