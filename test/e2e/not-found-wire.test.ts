// Pins the not-found error as it is on the wire, below the SDK client (which reports -32602 either
// way): a 2025-era peer gets code -32002, a 2026-07-28 peer gets -32602, and on both `error.data`
// is exactly { uri } — for a missing file, a file outside every root, a symlink escaping the root,
// an ignored file and an unknown scheme — over raw stdio lines and raw HTTP requests.
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ResourceNotFoundError } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import {
  Cleanup,
  connectStdio,
  ERAS,
  spawnHttpServer,
  type Era,
  type HttpServerProcess,
} from '../helpers/clients.js';
import { dirUri, fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import {
  eraParams,
  LegacyHttpSession,
  modernHttpRequest,
  RawStdio,
  type JsonRpcResponse,
} from '../helpers/wire.js';

const cleanup = new Cleanup();
let root: string;
let outside: string;
let http: HttpServerProcess;

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir();
  outside = makeTempDir();
  cleanup.add(() => removeTree(root));
  cleanup.add(() => removeTree(outside));
  writeTree(root, {
    'present.txt': 'here\n',
    '.gitignore': 'secret.env\n',
    'secret.env': 'TOKEN=1\n',
  });
  writeFileSync(join(outside, 'target.txt'), 'outside\n');
  symlinkSync(join(outside, 'target.txt'), join(root, 'escape.txt'));
  http = await spawnHttpServer([root], [], cleanup);
});

afterAll(() => cleanup.run());

/** URIs that must all be answered as not found, with data exactly { uri: <the URI> }. */
const CASES: Record<string, () => string> = {
  'a missing file': () => fileUri(root, 'missing.txt'),
  'a missing file in a missing directory': () => fileUri(root, 'no/such/dir/file.md'),
  'an existing file outside every root': () => fileUri(outside, 'target.txt'),
  'a symlink inside the root that points outside it': () => fileUri(root, 'escape.txt'),
  "a .gitignore'd file": () => fileUri(root, 'secret.env'),
  'an unknown scheme': () => 's3://bucket/some/key.txt',
  'an https URL': () => 'https://example.com/present.txt',
  'a file URL on another host': () =>
    `file://fileserver${dirUri(root).slice('file://'.length)}present.txt`,
};
const WHAT = Object.keys(CASES);

const EXPECTED_CODE: Record<Era, number> = { '2025': -32002, '2026': -32602 };

function expectNotFound(response: JsonRpcResponse, era: Era, uri: string): void {
  expect(response.result).toBeUndefined();
  expect(response.error).toEqual({
    code: EXPECTED_CODE[era],
    message: `Resource not found: ${uri}`,
    data: { uri },
  });
}

describe.each(ERAS)('over raw stdio in the %s era', (era) => {
  let wire: RawStdio;

  beforeAll(async () => {
    wire = RawStdio.serve([root]);
    cleanup.add(() => wire.kill());
    if (era === '2025') {
      const init = await wire.initialize();
      expect(init.result?.['protocolVersion']).toBe('2025-11-25');
    }
  });

  it.each(WHAT)(
    `answers %s with code ${EXPECTED_CODE[era]} and data exactly { uri }`,
    async (what) => {
      const uri = CASES[what]!();
      const response = await wire.request('resources/read', eraParams(era, { uri }));
      expectNotFound(response, era, uri);
    },
  );

  it('echoes in data.uri the URI exactly as the client sent it, even when it is not in normal form', async () => {
    // Clients match error.data.uri against the URI they asked for; a normalised echo breaks that.
    for (const uri of [
      `${dirUri(root)}sub/../missing.txt`,
      `FILE://${dirUri(root).slice('file://'.length)}missing.txt`,
    ]) {
      const response = await wire.request('resources/read', eraParams(era, { uri }));
      expect(response.error?.code, uri).toBe(EXPECTED_CODE[era]);
      expect(response.error?.data, uri).toEqual({ uri });
    }
  });

  it('still reads an existing file on the same connection afterwards', async () => {
    const response = await wire.request(
      'resources/read',
      eraParams(era, { uri: fileUri(root, 'present.txt') }),
    );
    expect(response.result?.['contents']).toEqual([
      { uri: fileUri(root, 'present.txt'), mimeType: 'text/plain', text: 'here\n' },
    ]);
  });
});

describe('over raw HTTP in the 2025 era', () => {
  let session: LegacyHttpSession;

  beforeAll(async () => {
    session = await LegacyHttpSession.open(http.url);
    cleanup.add(() => session.close());
  });

  it.each(WHAT)('answers %s with code -32002 and data exactly { uri }', async (what) => {
    const uri = CASES[what]!();
    expectNotFound(await session.request('resources/read', { uri }), '2025', uri);
  });
});

describe('over raw HTTP in the 2026 era', () => {
  it.each(WHAT)('answers %s with code -32602 and data exactly { uri }', async (what) => {
    const uri = CASES[what]!();
    const response = await modernHttpRequest(http.url, 7, 'resources/read', { uri });
    expect(response.status).toBe(200);
    expect(response.messages).toHaveLength(1);
    expectNotFound(response.messages[0]!, '2026', uri);
  });
});

describe.each(ERAS)('through the SDK client over stdio in the %s era', (era) => {
  it('surfaces not found as a ResourceNotFoundError with code -32602 and data { uri }', async () => {
    const { client } = await connectStdio(era, [root], [], cleanup);
    const uri = fileUri(root, 'missing.txt');
    const error: unknown = await client.readResource({ uri }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResourceNotFoundError);
    expect(error).toMatchObject({ code: -32602, data: { uri } });
  });
});
