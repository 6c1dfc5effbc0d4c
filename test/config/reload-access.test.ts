// A reload that adds a source and the rules for it puts the rules in force first: the new source is
// never served, not for a moment, under the rules written before it. Observed in process, from the
// hook a reload calls once the sources are mounted (where the tools made from templates follow).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { mergeSettings, type CommandLine } from '../../src/config/merge.js';
import type { Principal } from '../../src/core/principal.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { ConfigReloader } from '../../src/server/reload.js';
import { buildProvider } from '../../src/server/sources.js';
import { dirUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { MemoryLogger } from '../subscriptions/harness.js';

const guest: Principal = { id: 'guest', kind: 'token', scopes: [] };

let dir: string;
let file: string;
let reservoir: Reservoir;
let reloader: ConfigReloader;
/** What the guest could read of the new source when its mount was announced. */
const seenAtMount: boolean[] = [];

beforeAll(async () => {
  dir = makeTempDir('reservoir-reload-access-');
  writeTree(dir, { 'open/a.txt': 'a', 'secret/key.txt': 'k' });
  file = join(dir, 'reservoir.yaml');
  // No rules at first: everything is served to everyone.
  writeFileSync(file, 'sources:\n  - { type: files, root: open }\n');
  const config = loadConfig(file, { env: {} });
  const commandLine: CommandLine = { roots: [], source: {} };
  const settings = mergeSettings(config, commandLine);
  reservoir = createReservoir({});
  for (const source of settings.sources) reservoir.mount(await buildProvider(source));
  reloader = new ConfigReloader({
    reservoir,
    config,
    settings,
    commandLine,
    logger: new MemoryLogger(),
    env: {},
    onSourcesChanged: async () => {
      seenAtMount.push(
        await reservoir.registry.access.admits(guest, 'read', `${dirUri(dir, 'secret')}key.txt`),
      );
    },
  });
});

afterAll(async () => {
  reloader.close();
  await reservoir.close();
  removeTree(dir);
});

describe('a reload that adds a source with rules for it', () => {
  it('has the new rules in force before the new source is mounted', async () => {
    writeFileSync(
      file,
      [
        'sources:',
        '  - { type: files, root: open }',
        '  - { type: files, root: secret }',
        'access:',
        '  rules:',
        "    - { principals: ['token:guest'], allow: ['**'], deny: ['" +
          dirUri(dir, 'secret') +
          "**'] }",
        '',
      ].join('\n'),
    );
    expect(await reloader.reload()).toBe('applied');
    expect(reservoir.registry.providers().map((p) => p.root)).toContain(dirUri(dir, 'secret'));
    expect(seenAtMount).toEqual([false]);
    expect(
      await reservoir.registry.access.admits(guest, 'read', `${dirUri(dir, 'open')}a.txt`),
    ).toBe(true);
  });
});
