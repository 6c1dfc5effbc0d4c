// Pins the git provider end to end, through the real SDK client over an in-process stdio pair
// (`createReservoir(...).serveStdio` on PassThrough streams), in both protocol eras: the listing,
// text and blob reads, the four templates with completion, the history and commit views, a hostile
// ref answered as resource-not-found with the connection alive, and a commit reaching a subscriber
// as `updated` and a new file as `list_changed`.
import { ProtocolError } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERAS } from '../helpers/clients.js';
import { commit, git, makeRepo, repoName } from '../providers/git-helpers.js';
import { removeDir } from '../providers/helpers.js';
import {
  connectInProcess,
  Recorder,
  waitFor,
  watchUris,
  type InProcessStdio,
} from '../subscriptions/harness.js';
import { gitProvider } from '../../src/providers/git/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';

const BIN = Buffer.from([0, 1, 2, 254, 255, 10, 13, 0]);

describe.each(ERAS)('git provider end to end (%s era)', (era) => {
  let dir: string;
  let root: string;
  let reservoir: Reservoir;
  let connection: InProcessStdio;

  beforeAll(async () => {
    dir = makeRepo({ 'README.md': '# hello\n', 'docs/guide.md': 'guide\n', 'data.bin': BIN });
    git(dir, 'tag', 'v1');
    root = `git://${repoName(dir)}/`;
    reservoir = createReservoir({
      providers: [gitProvider({ path: dir, pollIntervalMs: 20 })],
      subscriptions: { listChangeDelayMs: 10, listChangeIntervalMs: 50 },
    });
    connection = await connectInProcess(reservoir, era);
  });

  afterAll(async () => {
    await connection?.close();
    await reservoir?.close();
    removeDir(dir);
  });

  it('lists the default branch and reads text and binary blobs', async () => {
    const { client } = connection;
    const listed = await client.listResources();
    expect(listed.resources.map((r) => r.uri)).toEqual([
      `${root}main/README.md`,
      `${root}main/data.bin`,
      `${root}main/docs/guide.md`,
    ]);
    expect(listed.resources[0]).toMatchObject({
      name: 'README.md',
      title: 'README.md',
      mimeType: 'text/markdown',
      size: 8,
    });
    const readme = await client.readResource({ uri: `${root}v1/README.md` });
    expect(readme.contents).toEqual([
      { uri: `${root}v1/README.md`, mimeType: 'text/markdown', text: '# hello\n' },
    ]);
    const bin = await client.readResource({ uri: `${root}main/data.bin` });
    expect(Buffer.from((bin.contents[0] as { blob: string }).blob, 'base64')).toEqual(BIN);
  });

  it('serves the templates, their completion and the JSON views', async () => {
    const { client } = connection;
    const templates = (await client.listResourceTemplates()).resourceTemplates.map(
      (t) => t.uriTemplate,
    );
    expect(templates).toEqual([
      `${root}{ref}/{+path}{?lines}`,
      `${root}{ref}/{+path}{?bytes}`,
      `${root}{ref}/{+path}`,
      `${root}log/{ref}/{+path}{?limit}`,
      `${root}log/{ref}{?limit}`,
      `${root}commits/{sha}`,
      `${root}{ref}/{+path}{?as,pages,sheet,range,slides}`,
    ]);
    const refs = await client.complete({
      ref: { type: 'ref/resource', uri: `${root}{ref}/{+path}` },
      argument: { name: 'ref', value: 'v' },
    });
    expect(refs.completion.values).toEqual(['v1']);
    const paths = await client.complete({
      ref: { type: 'ref/resource', uri: `${root}{ref}/{+path}` },
      argument: { name: 'path', value: 'do' },
      context: { arguments: { ref: 'v1' } },
    });
    expect(paths.completion.values).toEqual(['docs/']);
    const log = await client.readResource({ uri: `${root}log/main/docs/guide.md?limit=5` });
    expect(log.contents[0]!.mimeType).toBe('application/json');
    const history = JSON.parse((log.contents[0] as { text: string }).text);
    expect(history.commits).toHaveLength(1);
    const view = await client.readResource({ uri: history.commits[0].uri });
    expect(JSON.parse((view.contents[0] as { text: string }).text)).toMatchObject({
      sha: history.commits[0].sha,
      message: 'initial\n',
    });
  });

  it('answers a hostile ref as resource not found and keeps the connection', async () => {
    const { client } = connection;
    const error = await client.readResource({ uri: `${root}--output=x/README.md` }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProtocolError);
    // The SDK client reports the legacy -32002 as -32602 too; test/e2e/not-found-wire.test.ts pins the wire code.
    expect([-32602, -32002]).toContain((error as ProtocolError).code);
    expect((error as ProtocolError).data).toEqual({ uri: `${root}--output=x/README.md` });
    expect((await client.readResource({ uri: `${root}main/README.md` })).contents).toHaveLength(1);
  });

  it('delivers a commit to a subscriber as updated, and a new file as list_changed', async () => {
    const { client } = connection;
    const recorder = new Recorder(client);
    const uri = `${root}main/README.md`;
    const watching = await watchUris(client, era, [uri], true);
    commit(dir, { 'README.md': `# changed in ${era}\n` }, 'change');
    await waitFor(() => recorder.updates(uri) >= 1, 'the README update');
    commit(dir, { [`added-${era}.txt`]: 'new\n' }, 'add');
    await waitFor(() => recorder.listChanges() >= 1, 'list_changed');
    expect(recorder.updatedUris().every((u) => u === uri)).toBe(true);
    await watching.stop();
    await waitFor(() => reservoir.subscriptions.stats().watches === 0, 'the watch to stop');
  });
});
