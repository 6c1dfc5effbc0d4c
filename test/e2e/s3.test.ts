// Pins the s3 source end to end as a user runs it: `reservoir serve --config` with a files source
// and an s3 source on a real local S3 API server (s3rver), through the real SDK client over stdio
// and Streamable HTTP, in both protocol eras: both sources listed, odd keys and binary read back,
// a byte range through the template, key completion, a changed object reaching a subscriber as
// `updated`; and the S3 server going away answers S3 reads as unavailable while files still serve.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Cleanup,
  connectStdio,
  connectTarget,
  label,
  spawnHttpServer,
  TARGETS,
  type HttpServerProcess,
} from '../helpers/clients.js';
import { fileUri, removeDir, tempDir, writeTree } from '../providers/helpers.js';
import { LocalS3, S3_KEY, S3_SECRET } from '../providers/s3-server.js';
import { Recorder, waitFor, watchUris } from '../subscriptions/harness.js';

const BINARY = randomBytes(3000);

function configText(s3: LocalS3, bucket: string, docs: string, server: string[] = []): string {
  return [
    ...server,
    'sources:',
    '  - type: files',
    `    root: ${docs}`,
    '  - type: s3',
    `    bucket: ${bucket}`,
    `    endpoint: ${s3.endpoint}`,
    '    forcePathStyle: true',
    `    accessKeyId: ${S3_KEY}`,
    `    secretAccessKey: ${S3_SECRET}`,
    '    allowPrivateNetworks: true',
    '    pollIntervalMs: 50',
    '',
  ].join('\n');
}

let s3: LocalS3;
let dir: string;
let config: string;
let http: HttpServerProcess;
const cleanup = new Cleanup();

beforeAll(async () => {
  s3 = await LocalS3.start();
  await s3.bucket('e2e-bucket');
  await s3.putMany('e2e-bucket', [
    ['notes/a b#1.md', '# spaced and hashed'],
    ['notes/ünï.txt', 'unicode key'],
    ['bin/data.bin', BINARY],
    ['live/status.txt', 'version 1'],
  ]);
  dir = tempDir('reservoir-s3-e2e-');
  writeTree(dir, { 'docs/readme.md': 'local file' });
  config = join(dir, 'reservoir.yaml');
  // A source slower than its share of a list page is skipped from that page (by design); the local
  // S3 server on a loaded 2-core machine can be, so the share is generous here.
  writeFileSync(
    config,
    configText(s3, 'e2e-bucket', join(dir, 'docs'), ['server:', '  sourceListTimeoutMs: 30000']),
  );
  http = await spawnHttpServer([], ['--config', config], cleanup);
}, 60_000);
afterAll(async () => {
  await cleanup.run();
  await s3?.close();
  removeDir(dir);
});

describe.each(TARGETS)('s3 source through the CLI, $transport $era', (target) => {
  const connect = () =>
    connectTarget(target, { roots: [], args: ['--config', config], httpUrl: http.url }, cleanup);

  it(`lists the files and the s3 source side by side and reads odd keys and binary exactly (${label(target)})`, async () => {
    const client = await connect();
    const { resources } = await client.listResources();
    const listed = resources.map((r) => r.uri);
    expect(listed).toContain('s3://e2e-bucket/notes/a%20b%231.md');
    expect(listed).toContain('s3://e2e-bucket/notes/%C3%BCn%C3%AF.txt');
    expect(listed.some((uri) => uri.startsWith('file://') && uri.endsWith('/docs/readme.md'))).toBe(
      true,
    );
    const odd = await client.readResource({ uri: 's3://e2e-bucket/notes/a%20b%231.md' });
    expect(odd.contents[0]).toMatchObject({
      uri: 's3://e2e-bucket/notes/a%20b%231.md',
      mimeType: 'text/markdown',
      text: '# spaced and hashed',
    });
    const binary = await client.readResource({ uri: 's3://e2e-bucket/bin/data.bin' });
    expect(
      Buffer.from((binary.contents[0] as { blob: string }).blob, 'base64').equals(BINARY),
    ).toBe(true);
  });

  it(`reads a byte range through the template and completes keys by prefix (${label(target)})`, async () => {
    const client = await connect();
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toContain('s3://e2e-bucket/{+key}{?bytes}');
    const slice = await client.readResource({
      uri: 's3://e2e-bucket/notes/%C3%BCn%C3%AF.txt?bytes=0-6',
    });
    expect(slice.contents[0]).toMatchObject({ text: 'unicode' });
    const { completion } = await client.complete({
      ref: { type: 'ref/resource', uri: 's3://e2e-bucket/{+key}{?bytes}' },
      argument: { name: 'key', value: 'notes/' },
    });
    expect(completion.values).toEqual(['notes/a%20b%231.md', 'notes/%C3%BCn%C3%AF.txt']);
  });

  it(`sends resources/updated when a subscribed object changes in the bucket (${label(target)})`, async () => {
    const client = await connect();
    const recorder = new Recorder(client);
    const uri = 's3://e2e-bucket/live/status.txt';
    const watching = await watchUris(client, target.era, [uri]);
    await s3.put('e2e-bucket', 'live/status.txt', `version for ${label(target)}`);
    await waitFor(() => recorder.updates(uri) >= 1, 'the update notification');
    const read = await client.readResource({ uri });
    expect(read.contents[0]).toMatchObject({ text: `version for ${label(target)}` });
    await watching.stop();
  });
});

describe('the S3 server going away', () => {
  it('answers S3 reads as unavailable, with the reason, while the files source still serves', async () => {
    const own = await LocalS3.start();
    await own.bucket('doomed-e2e');
    await own.put('doomed-e2e', 'k.txt', 'here');
    const ownConfig = join(dir, 'doomed.yaml');
    writeFileSync(ownConfig, configText(own, 'doomed-e2e', join(dir, 'docs')));
    const connection = await connectStdio('2026', [], ['--config', ownConfig], cleanup);
    try {
      const before = await connection.client.readResource({ uri: 's3://doomed-e2e/k.txt' });
      expect(before.contents[0]).toMatchObject({ text: 'here' });
      await own.stop();
      const error = (await connection.client
        .readResource({ uri: 's3://doomed-e2e/k.txt' })
        .catch((e: unknown) => e)) as {
        code: number;
        message: string;
        data: Record<string, unknown>;
      };
      expect(error.code).toBe(-32011);
      expect(error.data).toMatchObject({ code: 'unavailable', uri: 's3://doomed-e2e/k.txt' });
      expect(error.message).toMatch(/S3 request failed \(ECONNREFUSED/);
      // (Whether resources/list still shows the other sources while one fails is the registry's list
      // merge, pinned by its own tests.)
      const file = await connection.client.readResource({
        uri: fileUri(join(dir, 'docs', 'readme.md')),
      });
      expect(file.contents[0]).toMatchObject({ text: 'local file' });
    } finally {
      await connection.close();
      await own.close();
    }
  });
});

// Runs after the reads above, so the server has made its S3 client (where the SDK checks the runtime).
it(`prints the AWS SDK's Node-version warning only on a runtime Reservoir does not support (Node ${process.versions.node})`, () => {
  const supported = Number(process.versions.node.split('.')[0]) >= 22;
  expect(http.stderr().includes('NodeVersionSupportWarning')).toBe(!supported);
});
