// Pins the read cap at its edge over a real stdio pipe with the real SDK client, in both eras: with
// the default --max-read-bytes (7340032), a binary file of exactly that size reads whole (its
// base64 response fits the SDK client's 10 MiB stdio message limit) with the same SHA-256; one byte
// more is error -32010 carrying the size and the limit; and the connection keeps working.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ProtocolError,
  STDIO_DEFAULT_MAX_BUFFER_SIZE,
  type Client,
} from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup, connectStdio, ERAS } from '../helpers/clients.js';
import { fileUri, makeTempDir, removeTree, sha256 } from '../helpers/tree.js';

const DEFAULT_MAX_READ_BYTES = 7_340_032;

const cleanup = new Cleanup();
let root: string;
let bytes: Buffer;

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir();
  cleanup.add(() => removeTree(root));
  bytes = randomBytes(DEFAULT_MAX_READ_BYTES + 1);
  writeFileSync(join(root, 'exact.bin'), bytes.subarray(0, DEFAULT_MAX_READ_BYTES));
  writeFileSync(join(root, 'over.bin'), bytes);
  writeFileSync(join(root, 'small.txt'), 'still here\n');
});

afterAll(() => cleanup.run());

describe.each(ERAS)('over stdio in the %s era, with the default cap', (era) => {
  let client: Client;
  let stderr: () => string;

  beforeAll(async () => {
    // No --max-read-bytes: the default is what must fit the client's stdio limit.
    ({ client, stderr } = await connectStdio(era, [root], [], cleanup));
  });

  it('reads a binary file of exactly --max-read-bytes whole, as a blob with the same SHA-256', async () => {
    const uri = fileUri(root, 'exact.bin');
    const result = await client.readResource({ uri });
    expect(result.contents).toHaveLength(1);
    const content = result.contents[0]!;
    if (!('blob' in content)) throw new Error('expected a blob');
    expect(content.uri).toBe(uri);
    expect(content.blob.length).toBeLessThan(STDIO_DEFAULT_MAX_BUFFER_SIZE);
    const decoded = Buffer.from(content.blob, 'base64');
    expect(decoded.length).toBe(DEFAULT_MAX_READ_BYTES);
    expect(sha256(decoded)).toBe(sha256(bytes.subarray(0, DEFAULT_MAX_READ_BYTES)));
  });

  it('answers a file one byte over the cap with error -32010 carrying its size and the limit', async () => {
    const uri = fileUri(root, 'over.bin');
    const error: unknown = await client.readResource({ uri }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error).toMatchObject({
      code: -32010,
      data: {
        uri,
        size: DEFAULT_MAX_READ_BYTES + 1,
        limit: DEFAULT_MAX_READ_BYTES,
        measure: 'size',
        code: 'too_large',
      },
    });
    expect((error as Error).message).toContain(`is ${DEFAULT_MAX_READ_BYTES + 1} bytes`);
  });

  it('keeps the connection usable after the near-limit response and the too-large error', async () => {
    const small = await client.readResource({ uri: fileUri(root, 'small.txt') });
    expect(small.contents).toEqual([expect.objectContaining({ text: 'still here\n' })]);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.title).sort()).toEqual(['exact.bin', 'over.bin', 'small.txt']);
    expect(stderr()).toBe('');
  });
});
