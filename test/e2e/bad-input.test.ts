// Pins what a user of the real SDK client sees for bad input, over stdio and HTTP in both eras: an
// unknown scheme is "not found"; malformed, relative, empty and control-character URIs are
// -32602 with data.code 'invalid_uri'; forged, edited and stale cursors (one minted by another
// server process) are -32602 "Invalid cursor…"; a file deleted between list and read is not found;
// and after every one of these the connection keeps working.
import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ProtocolError, ResourceNotFoundError, type Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import {
  Cleanup,
  connectTarget,
  listPage,
  spawnHttpServer,
  TARGETS,
  type HttpServerProcess,
} from '../helpers/clients.js';
import { fileUri, makeTempDir, pad, removeTree, writeTree } from '../helpers/tree.js';

const PAGE_SIZE = 10;
const cleanup = new Cleanup();
/** The state directory (and so the cursor key) of the servers under test, and another one's. */
const STATE = makeTempDir('reservoir-state-');
const OTHER_STATE = makeTempDir('reservoir-state-');
cleanup.add(() => removeTree(STATE));
cleanup.add(() => removeTree(OTHER_STATE));
const ARGS = ['--page-size', String(PAGE_SIZE), '--state-dir', STATE];
const OTHER_ARGS = ['--page-size', String(PAGE_SIZE), '--state-dir', OTHER_STATE];

let root: string;
let http: HttpServerProcess;
/** A second, independent HTTP server on the same root with another state directory: its cursor key is its own. */
let otherHttp: HttpServerProcess;
/** A third HTTP server sharing the first one's state directory, as a restart of it would. */
let sameKeyHttp: HttpServerProcess;

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir();
  cleanup.add(() => removeTree(root));
  const files: Record<string, string> = {};
  for (let i = 0; i < 35; i += 1) files[`dir${i % 3}/file${pad(i, 3)}.txt`] = `file ${i}\n`;
  writeTree(root, files);
  [http, otherHttp, sameKeyHttp] = await Promise.all([
    spawnHttpServer([root], ARGS, cleanup),
    spawnHttpServer([root], OTHER_ARGS, cleanup),
    spawnHttpServer([root], ARGS, cleanup),
  ]);
});

afterAll(() => cleanup.run());

/** The error a call rejected with (fails the test if it resolved). */
async function failure(promise: Promise<unknown>): Promise<ProtocolError> {
  const outcome = await promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  if (outcome.ok)
    throw new Error(`expected a failure, got ${JSON.stringify(outcome.value).slice(0, 200)}`);
  expect(outcome.error).toBeInstanceOf(ProtocolError);
  return outcome.error as ProtocolError;
}

/** Flips one character in the middle of a cursor's payload (never a padding-bit-only last char). */
function editCursor(cursor: string): string {
  const i = Math.min(5, Math.floor(cursor.indexOf('.') / 2));
  const replacement = cursor[i] === 'A' ? 'B' : 'A';
  return `${cursor.slice(0, i)}${replacement}${cursor.slice(i + 1)}`;
}

describe.each(TARGETS)('over $transport in the $era era', (target) => {
  let client: Client;

  beforeAll(async () => {
    client = await connectTarget(target, { roots: [root], args: ARGS, httpUrl: http.url }, cleanup);
  });

  it('answers a URI with an unknown scheme as resource not found, with data { uri }', async () => {
    const uri = 'gopher://example.com/1/file.txt';
    const error = await failure(client.readResource({ uri }));
    expect(error).toBeInstanceOf(ResourceNotFoundError);
    expect(error.code).toBe(-32602);
    expect(error.data).toEqual({ uri });
    expect(error.message).toContain(`Resource not found: ${uri}`);
  });

  it.each([
    ['a malformed URI', 'file://%zz', 'the URI is malformed'],
    ['a malformed authority', 'file://a b/x.txt', 'the URI is malformed'],
    ['a relative URI', 'dir0/file000.txt', 'the URI is relative'],
    ['a relative URI with a leading slash', '/etc/passwd', 'the URI is relative'],
    ['an empty URI', '', 'the URI is empty'],
    ['a URI with a newline', 'file:///tmp/a\nb.txt', 'the URI contains control characters'],
    ['a URI with a NUL', 'file:///tmp/a\u0000b.txt', 'the URI contains control characters'],
  ])(
    'rejects %s as invalid params with data.code invalid_uri and a reason',
    async (_what, uri, reason) => {
      const error = await failure(client.readResource({ uri }));
      expect(error).not.toBeInstanceOf(ResourceNotFoundError);
      expect(error.code).toBe(-32602);
      expect(error.data).toMatchObject({ code: 'invalid_uri', uri });
      expect((error.data as { reason: string }).reason).toContain(reason);
      expect(error.message).toContain('Invalid resource URI');
    },
  );

  it('rejects a forged cursor as invalid params telling the user to start again', async () => {
    const forged = `${Buffer.from(JSON.stringify([1, 'resources', 'file:///', 'etc/passwd'])).toString('base64url')}.AAAAAAAAAAAAAAAAAAAAAA`;
    for (const cursor of [forged, 'not-a-cursor', 'x'.repeat(9000)]) {
      const error = await failure(listPage(client, cursor));
      expect(error.code, cursor.slice(0, 20)).toBe(-32602);
      expect(error.message, cursor.slice(0, 20)).toMatch(
        /Invalid cursor: .*Start again without a cursor\./,
      );
      expect(error.data, cursor.slice(0, 20)).toMatchObject({ code: 'invalid_cursor' });
    }
  });

  it('rejects a real cursor with one character changed as an invalid cursor', async () => {
    const { nextCursor } = await listPage(client);
    expect(nextCursor).toBeDefined();
    const edited = editCursor(nextCursor!);
    expect(edited).not.toBe(nextCursor);
    const error = await failure(listPage(client, edited));
    expect(error.code).toBe(-32602);
    expect(error.message).toMatch(/^.*Invalid cursor/);
    expect(error.data).toMatchObject({ code: 'invalid_cursor' });
    // The untouched cursor still works.
    expect((await listPage(client, nextCursor)).resources).toHaveLength(PAGE_SIZE);
  });

  it('accepts a cursor from one server process in a freshly started one sharing its state directory (its cursor key)', async () => {
    const { nextCursor } = await listPage(client);
    expect(nextCursor).toBeDefined();
    // Over stdio this spawns a new process; over HTTP it joins the third server, started apart.
    const fresh = await connectTarget(
      target,
      { roots: [root], args: ARGS, httpUrl: sameKeyHttp.url },
      cleanup,
    );
    expect((await listPage(fresh, nextCursor)).resources).toHaveLength(PAGE_SIZE);
  });

  it('rejects a cursor from one server process given to one with another state directory as an invalid cursor', async () => {
    const { nextCursor } = await listPage(client);
    expect(nextCursor).toBeDefined();
    // Over stdio this spawns a new process; over HTTP it joins the second, independent server.
    const fresh = await connectTarget(
      target,
      { roots: [root], args: OTHER_ARGS, httpUrl: otherHttp.url },
      cleanup,
    );
    const error = await failure(listPage(fresh, nextCursor));
    expect(error.code).toBe(-32602);
    expect(error.message).toContain('Invalid cursor');
    expect(error.data).toMatchObject({ code: 'invalid_cursor' });
    expect((await listPage(fresh)).resources).toHaveLength(PAGE_SIZE);
  });

  it('answers a file deleted between list and read as resource not found', async () => {
    const rel = `gone-${target.transport}-${target.era}.txt`;
    writeTree(root, { [rel]: 'soon gone\n' });
    const { resources } = await client.listResources();
    const listed = resources.find((r) => r.title === rel);
    expect(listed?.uri).toBe(fileUri(root, rel));
    unlinkSync(join(root, rel));
    const error = await failure(client.readResource({ uri: listed!.uri }));
    expect(error).toBeInstanceOf(ResourceNotFoundError);
    expect(error.data).toEqual({ uri: listed!.uri });
  });

  it('keeps the connection usable after all of these errors', async () => {
    const page = await listPage(client);
    expect(page.resources).toHaveLength(PAGE_SIZE);
    const read = await client.readResource({ uri: page.resources[0]!.uri });
    expect(read.contents).toHaveLength(1);
  });
});
