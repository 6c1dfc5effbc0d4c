// Pins how the stdio wire writes blobs this process made (core/base64-blob.ts): the base64 is made
// a piece at a time as stdout takes it, so however slowly the client reads, stdout never holds more
// than about one piece beyond its high-water mark; the lines stay byte for byte JSON.stringify's and
// whole, in the order they were sent, over an in-memory stream and over a real socket (the stdout
// pipe's kind, written through reused slabs); a stdout that fails mid-blob rejects the send.
import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import { PassThrough, Writable } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { base64Blob } from '../../src/core/base64-blob.js';
import { StdioWire } from '../../src/stdio/wire.js';

/** Bytes that are not text, `size` of them, different for each `seed`. */
function bytesOf(size: number, seed: number): Buffer {
  const bytes = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i += 1) bytes[i] = (i * 7919 + seed * 31) % 251;
  return bytes;
}

function blobAnswer(id: number, bytes: Buffer): JSONRPCMessage {
  const content = base64Blob(
    { uri: `file:///r/${id}.bin`, mimeType: 'application/octet-stream' },
    bytes,
  );
  return { jsonrpc: '2.0', id, result: { contents: [content] } } as JSONRPCMessage;
}

/** The line JSON.stringify writes for the same answer (made from a fresh content). */
function expectedLine(id: number, bytes: Buffer): string {
  const content = {
    uri: `file:///r/${id}.bin`,
    mimeType: 'application/octet-stream',
    blob: bytes.toString('base64'),
  };
  return JSON.stringify({ jsonrpc: '2.0', id, result: { contents: [content] } });
}

async function wireOn(stdout: Writable): Promise<{ wire: StdioWire; errors: Error[] }> {
  const wire = new StdioWire(new PassThrough(), stdout);
  const errors: Error[] = [];
  wire.onerror = (error) => errors.push(error);
  await wire.start();
  return { wire, errors };
}

describe('StdioWire writing made blobs', () => {
  it('makes the base64 as a slow stdout takes it: never more than one piece past its high-water mark', async () => {
    const highWaterMark = 16 * 1024;
    const stdout = new PassThrough({ highWaterMark });
    let most = 0;
    const write = stdout.write.bind(stdout) as (...args: unknown[]) => boolean;
    stdout.write = ((...args: unknown[]) => {
      const accepted = write(...args);
      most = Math.max(most, stdout.writableLength);
      return accepted;
    }) as typeof stdout.write;
    const { wire, errors } = await wireOn(stdout);
    const first = bytesOf(3 * 1024 * 1024 + 1, 1);
    const second = bytesOf(1024 * 1024 + 2, 2);
    const sent = Promise.all([
      wire.send(blobAnswer(1, first)),
      wire.send({ jsonrpc: '2.0', id: 2, result: {} }),
      wire.send(blobAnswer(3, second)),
    ]);
    // The client takes what is there, one turn at a time.
    const chunks: Buffer[] = [];
    const reader = (async () => {
      for await (const chunk of stdout) {
        chunks.push(chunk as Buffer);
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    await sent;
    stdout.end();
    await reader;
    const lines = Buffer.concat(chunks).toString('latin1').split('\n');
    expect(lines).toEqual([
      expectedLine(1, first),
      JSON.stringify({ jsonrpc: '2.0', id: 2, result: {} }),
      expectedLine(3, second),
      '',
    ]);
    // A 4 MiB blob written at once would have left megabytes waiting in stdout.
    expect(most).toBeLessThanOrEqual(highWaterMark + 64 * 1024 + 1024);
    expect(errors).toEqual([]);
  });

  it('writes blobs through a socket whole and in order, with answers sent while one streams', async () => {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address() as { port: number };
    const accepted = once(server, 'connection') as Promise<[Socket]>;
    const client = connect(address.port, '127.0.0.1');
    await once(client, 'connect');
    const [peer] = await accepted;
    try {
      const received: Buffer[] = [];
      peer.on('data', (chunk: Buffer) => received.push(chunk));
      const { wire, errors } = await wireOn(client);
      const sizes = [5 * 1024 * 1024 + 1, 0, 1, 2, 3, 48 * 1024, 48 * 1024 + 1];
      const sends = sizes.map((size, i) => wire.send(blobAnswer(i, bytesOf(size, i))));
      // Sent on a later turn, while the first blob is still streaming: written after it, whole.
      await new Promise((resolve) => setImmediate(resolve));
      sends.push(wire.send({ jsonrpc: '2.0', id: 'late', result: { ok: true } }));
      await Promise.all(sends);
      const expected = [
        ...sizes.map((size, i) => expectedLine(i, bytesOf(size, i))),
        JSON.stringify({ jsonrpc: '2.0', id: 'late', result: { ok: true } }),
      ];
      const total = expected.reduce((n, line) => n + line.length + 1, 0);
      while (received.reduce((n, chunk) => n + chunk.length, 0) < total) await once(peer, 'data');
      expect(Buffer.concat(received).toString('latin1')).toBe(`${expected.join('\n')}\n`);
      expect(errors).toEqual([]);
    } finally {
      client.destroy();
      peer.destroy();
      server.close();
    }
  });

  it('rejects the send when stdout fails in the middle of a blob, and closes', async () => {
    const failure = new Error('EPIPE: broken pipe');
    let writes = 0;
    const stdout = new Writable({
      highWaterMark: 1024,
      write: (_chunk, _encoding, callback) => {
        writes += 1;
        setImmediate(() => callback(writes > 3 ? failure : null));
      },
    });
    const { wire, errors } = await wireOn(stdout);
    let closes = 0;
    wire.onclose = () => (closes += 1);
    await expect(wire.send(blobAnswer(1, bytesOf(1024 * 1024, 3)))).rejects.toBe(failure);
    expect(errors).toContain(failure);
    expect(closes).toBe(1);
    // Stopped at the failure: far fewer writes than the blob's 22 pieces.
    expect(writes).toBeLessThan(10);
  });
});
