// Documents through the real SDK client (in-process stdio): a document larger than its source's read cap renders when it fits the
// document cap (the original then rides along only when it fits the answer, else the rendition
// says how to read it in ranges), while one over the document cap is refused with an error that
// says so and names byte ranges. `?as=bytes` keeps the source's own cap.
import { join } from 'node:path';
import { ProtocolError } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocumentRenderer } from '../../src/documents/index.js';
import { DocumentReads } from '../../src/documents/reads.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { ensureBuilt } from '../helpers/build.js';
import { makePdf } from '../helpers/documents.js';
import { fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { connectInProcess, type InProcessStdio } from '../subscriptions/harness.js';

type Content = { uri: string; mimeType?: string; text?: string; blob?: string };

/** A PDF of `pages` pages of numbered lines: about 1.1 KB a page. */
function bigPdf(pages: number): Buffer {
  return makePdf(
    Array.from({ length: pages }, (_, p) => ({
      lines: Array.from(
        { length: 20 },
        (_, l) => `Page ${p + 1} line ${l + 1} of the long report.`,
      ),
    })),
  );
}

async function refusal(promise: Promise<unknown>): Promise<ProtocolError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProtocolError);
  return error as ProtocolError;
}

async function serve(reservoir: Reservoir): Promise<InProcessStdio> {
  return connectInProcess(reservoir, '2025');
}

describe('documents larger than the source read cap', () => {
  const READ_CAP = 4096;
  let dir: string;
  let reservoir: Reservoir;
  let connection: InProcessStdio;
  let documentCap: number;
  const uri = (name: string): string => fileUri(join(dir, 'docs'), name);
  const big = bigPdf(30);
  const huge = bigPdf(90);

  beforeAll(async () => {
    await ensureBuilt();
    dir = makeTempDir();
    writeTree(dir, { 'docs/big.pdf': big, 'docs/huge.pdf': huge });
    // Between the two: big.pdf fits the document cap, huge.pdf does not.
    documentCap = Math.floor((big.length + huge.length) / 2);
    reservoir = createReservoir({
      providers: [filesProvider({ root: join(dir, 'docs'), maxReadBytes: READ_CAP })],
      // An answer holds big.pdf's rendition but not its original beside it.
      maxResponseBytes: big.length,
      reads: new DocumentReads(new DocumentRenderer({ maxDocumentBytes: documentCap })),
    });
    connection = await serve(reservoir);
  }, 180_000);

  afterAll(async () => {
    await connection?.close();
    await reservoir?.close();
    removeTree(dir);
  });

  it('renders a document over the read cap that fits the document cap', async () => {
    expect(big.length).toBeGreaterThan(READ_CAP);
    const read = await connection.client.readResource({ uri: `${uri('big.pdf')}?as=markdown` });
    const text = (read.contents[0] as Content).text!;
    expect(text).toContain('<!-- page 30 -->');
    expect(text).toContain('Page 30 line 20 of the long report.');
  });

  it('answers a plain read with the rendition alone, saying how to read the original in byte ranges', async () => {
    const read = await connection.client.readResource({ uri: uri('big.pdf') });
    expect(read.contents).toHaveLength(1);
    const text = (read.contents[0] as Content).text!;
    expect(text).toContain('Page 1 line 1 of the long report.');
    expect(text).toMatch(/The original \(\d+ bytes\) is left out of this read/);
    expect(text).toContain(`${uri('big.pdf')}?bytes=0-`);
  });

  it('keeps the source read cap for the original alone (?as=bytes)', async () => {
    const error = await refusal(
      connection.client.readResource({ uri: `${uri('big.pdf')}?as=bytes` }),
    );
    expect(error.code).toBe(-32010);
    expect(error.message).toContain(`over the limit of`);
    expect(error.message).toContain('?bytes=0-');
  });

  it('refuses a document over the document cap, saying so and naming byte ranges', async () => {
    const error = await refusal(connection.client.readResource({ uri: uri('huge.pdf') }));
    expect(error.code).toBe(-32010);
    expect(error.message).toContain('Document too large to convert to Markdown');
    expect(error.message).toContain(
      `is ${huge.length} bytes, over the limit of ${documentCap} bytes for documents read as Markdown`,
    );
    expect(error.message).toContain(`${uri('huge.pdf')}?bytes=0-${READ_CAP - 1}`);
    expect((error.data as { limit?: number }).limit).toBe(documentCap);
  });
});
