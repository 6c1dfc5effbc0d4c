// Smaller blob caps per client or principal (`server.limits.blobCaps`), over real sockets: a client
// whose clientInfo matches a rule (at initialize on 2025, in the request envelope on 2026-07-28) is
// refused a binary read over its cap with a `too_large` error naming the size, the cap and the rule,
// through resources/read and through read_resource alike; text is not capped; other clients read
// the same blob; a principal's rule applies whatever client it uses; the smallest matching cap wins.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlobCaps } from '../../src/core/blob-caps.js';
import { createAuthenticator, generateToken } from '../../src/http/auth.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { builtinTools } from '../../src/tools/index.js';
import { Cleanup, MODERN_VERSION } from '../helpers/clients.js';
import { tempDir } from '../providers/helpers.js';

const ALICE = generateToken();
const CAROL = generateToken();
const cleanup = new Cleanup();
let root: string;
let base: string;
let url: string;
let reservoir: Reservoir;

beforeAll(async () => {
  root = tempDir('reservoir-blob-caps-');
  const png = Buffer.alloc(200_000, 7);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(png);
  writeFileSync(join(root, 'picture.png'), png);
  writeFileSync(join(root, 'small.png'), png.subarray(0, 40_000));
  writeFileSync(join(root, 'notes.txt'), 'word '.repeat(60_000));
  base = pathToFileURL(root).href + '/';
  reservoir = createReservoir({
    providers: [filesProvider({ root })],
    blobCaps: new BlobCaps([
      { clients: ['old-sdk@1.*'], maxBlobBytes: 100_000 },
      { clients: ['old-sdk@1.2.*'], maxBlobBytes: 30_000 },
      { principals: ['token:carol'], maxBlobBytes: 50_000 },
    ]),
  });
  for (const tool of builtinTools(reservoir.registry)) reservoir.tools.add(tool);
  const endpoint = await reservoir.listen({
    port: 0,
    auth: createAuthenticator({
      tokens: [
        { name: 'alice', sha256: ALICE.sha256 },
        { name: 'carol', sha256: CAROL.sha256 },
      ],
    }),
  });
  url = endpoint.url;
});

afterAll(async () => {
  await cleanup.run();
  await reservoir?.close();
  rmSync(root, { recursive: true, force: true });
});

async function connectAs(
  token: string,
  name: string,
  version: string,
  era: '2025' | '2026' = '2025',
): Promise<Client> {
  const client = new Client(
    { name, version },
    era === '2026' ? { versionNegotiation: { mode: { pin: MODERN_VERSION } } } : {},
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  cleanup.add(() => client.close());
  return client;
}

const CLIENT_CAP =
  /is 200000 bytes of binary content, over the limit of 100000 bytes set for clients old-sdk@1\.\* \(server\.limits\.blobCaps\)/;

describe('a blob cap for a client', () => {
  it.each(['2025', '2026'] as const)(
    'refuses a matching client (%s era) a blob over it, with a too_large error naming the cap and the rule',
    async (era) => {
      const old = await connectAs(ALICE.token, 'old-sdk', '1.16.0', era);
      const refused = await old.readResource({ uri: `${base}picture.png` }).then(
        () => undefined,
        (error: { code?: number; message: string }) => error,
      );
      expect(refused?.code).toBe(-32010);
      expect(refused?.message).toMatch(CLIENT_CAP);
      // Under the cap, and text of any size, are served.
      const small = await old.readResource({ uri: `${base}small.png` });
      expect(small.contents[0]).toHaveProperty('blob');
      const notes = await old.readResource({ uri: `${base}notes.txt` });
      expect((notes.contents[0] as { text: string }).text.length).toBe(300_000);
    },
  );

  it('applies to read_resource too, as an isError result a model can read', async () => {
    const old = await connectAs(ALICE.token, 'old-sdk', '1.9.0');
    const result = await old.callTool({
      name: 'read_resource',
      arguments: { uri: `${base}picture.png` },
    });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toMatch(/over the limit of 100000 bytes/);
  });

  it('lets other clients, and other versions of the same one, read the blob', async () => {
    for (const [name, version] of [
      ['new-sdk', '1.16.0'],
      ['old-sdk', '2.0.0'],
    ] as const) {
      const client = await connectAs(ALICE.token, name, version);
      const read = await client.readResource({ uri: `${base}picture.png` });
      expect(read.contents[0]).toHaveProperty('blob');
    }
  });

  it('takes the smallest cap of the rules that match', async () => {
    const older = await connectAs(ALICE.token, 'old-sdk', '1.2.3');
    await expect(older.readResource({ uri: `${base}small.png` })).rejects.toThrow(
      /40000 bytes of binary content, over the limit of 30000 bytes set for clients old-sdk@1\.2\.\*/,
    );
  });
});

describe('a blob cap for a principal', () => {
  it('applies whatever client the principal uses', async () => {
    const carol = await connectAs(CAROL.token, 'new-sdk', '9.9.9');
    await expect(carol.readResource({ uri: `${base}picture.png` })).rejects.toThrow(
      /over the limit of 50000 bytes set for principals token:carol/,
    );
    expect((await carol.readResource({ uri: `${base}small.png` })).contents[0]).toHaveProperty(
      'blob',
    );
  });
});

describe('blob cap rules', () => {
  it('refuse a principal entry that does not say its kind, and a cap that is not a positive whole number', () => {
    expect(() => new BlobCaps([{ principals: ['carol'], maxBlobBytes: 1 }])).toThrow(
      /does not say which kind of principal it is: write token:carol/,
    );
    expect(() => new BlobCaps([{ clients: ['x'], maxBlobBytes: 0 }])).toThrow(/maxBlobBytes/);
    expect(() => new BlobCaps([{ clients: ['x'], maxBlobBytes: 1.5 }])).toThrow(/maxBlobBytes/);
  });
});
