// The document read layer is public API: a library user builds it with its own bounds — here the
// document cap — and passes it as `reads`, imported from the package's entry point alone. Through the
// real SDK client over an in-process stdio pair: a Word file under the cap is read as Markdown, one
// over it is refused naming the cap that was set, not the default.
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProtocolError } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createReservoir,
  DEFAULT_MAX_DOCUMENT_BYTES,
  DocumentReads,
  DocumentRenderer,
  filesProvider,
  type Reservoir,
} from '../../src/index.js';
import { makeDocx } from '../helpers/documents.js';
import { dirUri, makeTempDir, removeTree } from '../helpers/tree.js';
import { connectInProcess, type InProcessStdio } from '../subscriptions/harness.js';

const CAP = 16 * 1024;
let dir: string;
let reservoir: Reservoir;
let connection: InProcessStdio;

beforeAll(async () => {
  dir = makeTempDir('reservoir-document-reads-');
  writeFileSync(
    join(dir, 'small.docx'),
    makeDocx([{ heading: 'Plan' }, { paragraph: 'Ship it.' }]),
  );
  // Paragraphs of random words: a zip does not squeeze them under the cap.
  const words = (n: number): string =>
    Array.from({ length: n }, () => Math.random().toString(36).slice(2, 9)).join(' ');
  writeFileSync(
    join(dir, 'large.docx'),
    makeDocx(Array.from({ length: 200 }, () => ({ paragraph: words(20) }))),
  );
  const renderer = new DocumentRenderer({ maxDocumentBytes: CAP, workers: 1 });
  reservoir = createReservoir({
    providers: [filesProvider({ root: dir })],
    reads: new DocumentReads(renderer),
  });
  connection = await connectInProcess(reservoir, '2026');
});

afterAll(async () => {
  await connection?.close();
  await reservoir?.close();
  removeTree(dir);
});

describe('a document read layer built by the library user', () => {
  it('reads a document under its cap as Markdown and refuses one over it, naming that cap', async () => {
    expect(CAP).toBeLessThan(DEFAULT_MAX_DOCUMENT_BYTES);
    expect(statSync(join(dir, 'large.docx')).size).toBeGreaterThan(CAP);
    const root = dirUri(dir);
    const small = await connection.client.readResource({ uri: `${root}small.docx` });
    expect(small.contents[0]).toMatchObject({ mimeType: 'text/markdown' });
    expect((small.contents[0] as { text: string }).text).toContain('Ship it.');
    const refused = await connection.client
      .readResource({ uri: `${root}large.docx` })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ProtocolError);
    expect((refused as ProtocolError).message).toContain(
      `over the limit of ${CAP} bytes for documents read as Markdown`,
    );
  });
});
