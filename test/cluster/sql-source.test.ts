// A real polled source in cluster mode: one SQLite database served by three instances. Exactly one
// instance polls it (the lease holder); a row changed in the database reaches a 2025 subscriber and
// a 2026 listen stream on the other instances once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSqliteDriver } from '../../src/core/sqlite-driver.js';
import { afterEach, describe, expect, it } from 'vitest';
import { sqlProvider, type SqlProvider } from '../../src/providers/sql/index.js';
import { Cleanup, connectHttp } from '../helpers/clients.js';
import { afterMarker, Recorder, waitFor, watchUris } from '../subscriptions/harness.js';
import { Backend, REDIS_URL, startMember, uniquePrefix, type Member } from './harness.js';

const Database = loadSqliteDriver();

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

describe.skipIf(REDIS_URL === undefined)('a SQLite source served by three instances', () => {
  it('is polled by one instance only, and a changed row reaches subscribers on the others once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reservoir-cluster-sql-'));
    cleanup.add(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'shop.db');
    const db = new Database(path);
    cleanup.add(() => db.close());
    db.exec(
      `CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL); INSERT INTO items (label) VALUES ('apple'), ('banana');
       CREATE TABLE marks (id INTEGER PRIMARY KEY, n INTEGER NOT NULL); INSERT INTO marks (n) VALUES (0);`,
    );
    const prefix = uniquePrefix();
    const members: Member[] = [];
    const providers = new Map<string, SqlProvider>();
    for (const name of ['A', 'B', 'C']) {
      const provider = sqlProvider({ path, pollIntervalMs: 50 });
      providers.set(name, provider);
      const member = await startMember(name, prefix, new Backend(), { providers: [provider] });
      cleanup.add(() => member.close());
      members.push(member);
    }
    const uri = 'db://shop/tables/items/rows';
    const marker = 'db://shop/tables/marks/rows';
    const legacy = await connectHttp('2025', members[0]!.url, cleanup);
    const modern = await connectHttp('2026', members[2]!.url, cleanup);
    const legacyEvents = new Recorder(legacy.client);
    const modernEvents = new Recorder(modern.client);
    await watchUris(legacy.client, '2025', [uri, marker]);
    await watchUris(modern.client, '2026', [uri, marker]);
    const holders = (): string[] =>
      members
        .filter((m) => m.reservoir.cluster!.watches.held().includes('db://shop/'))
        .map((m) => m.name);
    await waitFor(() => holders().length === 1, "one instance to hold the source's lease");
    // The holder's provider polls once its watches took their baseline: a change after that is seen.
    const holder = providers.get(holders()[0]!)!;
    await waitFor(
      () => holder.watchStats().watches === 2 && holder.watchStats().polling,
      "the holder's watches to take their baseline",
    );
    db.prepare('UPDATE items SET label = ? WHERE id = 1').run('apricot');
    await waitFor(
      () => legacyEvents.updates(uri) >= 1 && modernEvents.updates(uri) >= 1,
      'both clients to hear the changed row',
    );
    // SQLite keeps no per-table change counter, so the marker (a change to another table) is
    // reported for `items` too by the holder's next poll; a lease that changed hands under load
    // reports only what differs from the last report (marks). So items is heard 1 or 2 times: a
    // duplicate of the first change, arriving before the marker, would make it more.
    await afterMarker([legacyEvents, modernEvents], marker, () =>
      db.prepare('UPDATE marks SET n = n + 1').run(),
    );
    for (const events of [legacyEvents, modernEvents]) {
      expect(events.updates(uri)).toBeGreaterThanOrEqual(1);
      expect(events.updates(uri)).toBeLessThanOrEqual(2);
    }
    // Still one holder (a lease moved by a stalled loop overlaps its old holder for up to a tick).
    await waitFor(() => holders().length === 1, 'one instance to hold the lease');
    const read = await legacy.client.readResource({ uri });
    expect((read.contents[0] as { text: string }).text).toContain('apricot');
  });
});
