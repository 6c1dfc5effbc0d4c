// Pins what a reload applies and what it leaves for a restart (the search section among them), in process: prompts are replaced
// in one catalog change, sources mounted and unmounted, the log level changed; the HTTP address,
// page size and instructions are logged as needing a restart; an unchanged file does nothing; a
// broken one changes nothing and logs every problem.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { mergeSettings, type CommandLine } from '../../src/config/merge.js';
import { buildProvider } from '../../src/server/sources.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { applyPrompts, ConfigReloader } from '../../src/server/reload.js';
import { MemoryLogger } from '../subscriptions/harness.js';
import { dirUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';

const BASE = [
  'sources:',
  '  - { type: files, root: a }',
  'server:',
  '  pageSize: 100',
  '  http: { port: 7000 }',
  'prompts:',
  '  - { name: one, messages: [{ role: user, text: "1" }] }',
].join('\n');

let dir: string;
let file: string;
let reservoir: Reservoir;
let reloader: ConfigReloader;
let logger: MemoryLogger;
let levels: string[];
let catalogChanges = 0;

beforeAll(async () => {
  dir = makeTempDir('reservoir-reload-');
  writeTree(dir, { 'a/1.txt': '1', 'b/2.txt': '2' });
  file = join(dir, 'reservoir.yaml');
  writeFileSync(file, BASE);
  const config = loadConfig(file, { env: {} });
  const commandLine: CommandLine = { roots: [], source: {} };
  const settings = mergeSettings(config, commandLine);
  logger = new MemoryLogger();
  levels = [];
  reservoir = createReservoir({ logger, pageSize: settings.pageSize! });
  for (const source of settings.sources) reservoir.mount(await buildProvider(source));
  applyPrompts(reservoir, config);
  reservoir.prompts.onChange(() => (catalogChanges += 1));
  reloader = new ConfigReloader({
    reservoir,
    config,
    settings,
    commandLine,
    logger,
    env: {},
    setLogLevel: (level) => void levels.push(level),
  });
});

afterAll(async () => {
  reloader.close();
  await reservoir.close();
  removeTree(dir);
});

const roots = (): string[] => reservoir.registry.providers().map((p) => p.root);

describe('ConfigReloader.reload', () => {
  it('does nothing when the text did not change', async () => {
    expect(await reloader.reload()).toBe('unchanged');
    expect(catalogChanges).toBe(0);
  });

  it('applies prompts, sources and the log level; logs what needs a restart', async () => {
    writeFileSync(
      file,
      `${BASE.replace('root: a', 'root: b').replace('pageSize: 100', 'pageSize: 5\n  logLevel: debug\n  instructions: hi\n  memoryReducer: false').replace('7000', '7001, ui: false').replace('one', 'two')}\nsearch:\n  maxFileBytes: 10\nskills:\n  - { source: { type: files, root: a } }\n`,
    );
    expect(await reloader.reload()).toBe('applied');
    expect(catalogChanges).toBe(1);
    expect(reservoir.prompts.all().map((p) => p.name)).toEqual(['two']);
    expect(roots()).toEqual([dirUri(dir, 'b')]);
    expect(levels).toEqual(['debug']);
    expect(reservoir.registry.pageSize).toBe(100);
    const restart = logger.entries.filter((e) => e.level === 'warn').map((e) => e.msg);
    expect(restart).toEqual([
      'search changed: needs a restart; not applied',
      'server.pageSize changed: needs a restart; not applied',
      'server.memoryReducer changed: needs a restart; not applied',
      'server.instructions changed: needs a restart; not applied',
      'skills changed: needs a restart; not applied',
      'server.http.port changed: needs a restart; not applied',
      'server.http.ui changed: needs a restart; not applied',
    ]);
  });

  it('keeps everything when the new file is broken, and logs every problem', async () => {
    catalogChanges = 0;
    writeFileSync(file, 'sources:\n  - { type: files, root: nowhere }\nprompts: 3\n');
    expect(await reloader.reload()).toBe('rejected');
    expect(catalogChanges).toBe(0);
    expect(roots()).toEqual([dirUri(dir, 'b')]);
    const rejected = logger.entries.filter((e) => e.level === 'error').at(-1)!;
    expect(rejected.fields['problems']).toEqual([
      `${file}:3:1: prompts: expected a list, got a number (3)`,
    ]);
  });

  it('keeps a source whose settings did not change running, and does not touch unchanged prompts', async () => {
    writeFileSync(
      file,
      BASE.replace('root: a', 'root: b')
        .replace('one', 'two')
        .replace('}\n', '}\n  - { type: files, root: a }\n'),
    );
    const before = reservoir.registry.providers()[0];
    expect(await reloader.reload()).toBe('applied');
    expect(reservoir.registry.providers()[0]).toBe(before);
    expect(roots()).toEqual([dirUri(dir, 'b'), dirUri(dir, 'a')]);
    expect(catalogChanges).toBe(0);
  });
});
