// Documents from every kind of source, through the real SDK client (in-process stdio): an S3 bucket
// (s3rver, through the real AWS SDK) and an HTTP upstream serving a PDF and a Word file each answer
// the rendition first; and a document larger than its source's read cap renders when it fits the
// document cap (the original then rides along only when it fits the answer, else the rendition
// says how to read it in ranges), while one over the document cap is refused with an error that
// says so and names byte ranges. `?as=bytes` keeps the source's own cap.
import { join } from 'node:path';
import { ProtocolError } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocumentRenderer } from '../../src/documents/index.js';
import { DocumentReads } from '../../src/documents/reads.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { s3Provider } from '../../src/providers/s3/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { ensureBuilt } from '../helpers/build.js';
import { makeDocx, makePdf } from '../helpers/documents.js';
import { fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { providerFor, respond, Upstream } from '../providers/http-upstream.js';
import { LocalS3 } from '../providers/s3-server.js';
import { connectInProcess, type InProcessStdio } from '../subscriptions/harness.js';

type Content = { uri: string; mimeType?: string; text?: string; blob?: string };

const DOCX_MIME = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const PDF = makePdf([
  { heading: 'Handbook', lines: ['Welcome to the onboarding handbook.'] },
  { lines: ['Page two is about expenses.'] },
]);
const DOCX = makeDocx([{ heading: 'Spec' }, { paragraph: 'Widgets are blue.' }]);

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

describe('documents from an S3 bucket', () => {
  let s3: LocalS3;
  let reservoir: Reservoir;
  let connection: InProcessStdio;

  beforeAll(async () => {
    await ensureBuilt();
    s3 = await LocalS3.start();
    await s3.bucket('library');
    await s3.putMany('library', [
      ['guides/handbook.pdf', PDF],
      ['guides/spec.docx', DOCX],
    ]);
    reservoir = createReservoir({
      providers: [s3Provider(s3.source('library', { pollIntervalMs: 60_000 }))],
    });
    connection = await serve(reservoir);
  }, 180_000);

  afterAll(async () => {
    await connection?.close();
    await reservoir?.close();
    await s3?.close();
  });

  it('answers a PDF and a Word file with their rendition first and the original, byte for byte, second', async () => {
    const pdf = await connection.client.readResource({ uri: 's3://library/guides/handbook.pdf' });
    const [markdown, original] = pdf.contents as Content[];
    expect(markdown!.mimeType).toBe('text/markdown');
    expect(markdown!.text).toContain('<!-- page 2 -->');
    expect(markdown!.text).toContain('Page two is about expenses.');
    expect(Buffer.from(original!.blob!, 'base64').equals(PDF)).toBe(true);
    const docx = await connection.client.readResource({
      uri: 's3://library/guides/spec.docx?as=markdown',
    });
    expect(docx.contents).toHaveLength(1);
    expect((docx.contents[0] as Content).text).toContain('Widgets are blue.');
  });

  it('reads one page of a PDF in the bucket', async () => {
    const page = await connection.client.readResource({
      uri: 's3://library/guides/handbook.pdf?pages=2',
    });
    expect((page.contents[0] as Content).text).toContain('expenses');
    expect((page.contents[0] as Content).text).not.toContain('onboarding');
  });
});

describe('documents from an HTTP upstream', () => {
  let upstream: Upstream;
  let reservoir: Reservoir;
  let connection: InProcessStdio;

  beforeAll(async () => {
    await ensureBuilt();
    upstream = await Upstream.start();
    upstream
      .route('/files/handbook.pdf', respond(PDF, 'application/pdf'))
      // No extension: the upstream's Content-Type alone says it is a Word document.
      .route('/files/spec', respond(DOCX, DOCX_MIME));
    reservoir = createReservoir({
      providers: [
        providerFor(upstream, {
          name: 'intranet',
          endpoints: [
            { name: 'handbook', uri: 'handbook.pdf', upstream: 'files/handbook.pdf' },
            { name: 'spec', uri: 'spec', upstream: 'files/spec' },
          ],
        }),
      ],
    });
    connection = await serve(reservoir);
  }, 180_000);

  afterAll(async () => {
    await connection?.close();
    await reservoir?.close();
    await upstream?.close();
  });

  it('answers a PDF with its rendition first and the original second', async () => {
    const read = await connection.client.readResource({ uri: 'api://intranet/handbook.pdf' });
    const [markdown, original] = read.contents as Content[];
    expect(markdown!.mimeType).toBe('text/markdown');
    expect(markdown!.text).toContain('onboarding handbook');
    expect(Buffer.from(original!.blob!, 'base64').equals(PDF)).toBe(true);
  });

  it('renders a Word document the upstream names only by its Content-Type', async () => {
    const read = await connection.client.readResource({ uri: 'api://intranet/spec?as=markdown' });
    expect(read.contents).toHaveLength(1);
    expect((read.contents[0] as Content).text).toContain('Widgets are blue.');
  });
});

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
