// A cached rendition is found by the content hash of what the source answered, whether the same
// bytes came as a base64 blob, as text, or as raw bytes; and a hit neither decodes nor copies the
// document (the bytes are asked for only to convert). A file rewritten in place with bytes of the
// same size is rendered afresh: the remembered hash is keyed by the file's version, not its name.
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentHash, contentsHash } from '../../src/documents/cache.js';
import { DocumentRenderer } from '../../src/documents/index.js';
import { ensureBuilt } from '../helpers/build.js';
import { makePdf } from '../helpers/documents.js';
import { fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { connectInProcess } from '../subscriptions/harness.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir } from '../../src/server/index.js';

let renderer: DocumentRenderer;

beforeAll(async () => {
  await ensureBuilt();
  renderer = new DocumentRenderer({ limits: { ocr: false } });
}, 180_000);
afterAll(() => renderer.close());

describe('the rendition cache', () => {
  it('hashes a blob and a text by the bytes they hold', () => {
    const bytes = Buffer.from('<h1>Caf\u00e9</h1>', 'utf8');
    expect(contentsHash({ blob: bytes.toString('base64') })).toBe(contentHash(bytes));
    expect(contentsHash({ text: '<h1>Caf\u00e9</h1>' })).toBe(contentHash(bytes));
    expect(contentsHash({ text: '<h1>Cafe</h1>' })).not.toBe(contentHash(bytes));
  });

  it('answers a hit without asking for the bytes, and converts a miss from them', async () => {
    const pdf = makePdf([{ lines: ['Only in the cached one.'] }]);
    const first = await renderer.render(pdf, 'application/pdf', 'file:///a.pdf');
    const again = await renderer.renderHashed(
      contentsHash({ blob: pdf.toString('base64') }),
      () => {
        throw new Error('a hit must not read the bytes');
      },
      'application/pdf',
      'file:///copy-of-a.pdf',
    );
    expect(again.markdown).toBe(first.markdown);
    const other = makePdf([{ lines: ['A different document.'] }]);
    let asked = 0;
    const converted = await renderer.renderHashed(
      contentHash(other),
      () => {
        asked += 1;
        return other;
      },
      'application/pdf',
      'file:///b.pdf',
    );
    expect(asked).toBe(1);
    expect(converted.markdown).toContain('A different document.');
  });
});

describe('a document rewritten in place', () => {
  it('is rendered afresh when its bytes change at the same size', async () => {
    const dir = makeTempDir();
    const one = makePdf([{ lines: ['Version one of the plan.'] }]);
    const two = makePdf([{ lines: ['Version two of the plan.'] }]);
    expect(two.length).toBe(one.length);
    writeTree(dir, { 'plan.pdf': one });
    const reservoir = createReservoir({ providers: [filesProvider({ root: dir })] });
    const connection = await connectInProcess(reservoir, '2025');
    try {
      const uri = `${fileUri(dir, 'plan.pdf')}?as=markdown`;
      const text = async (): Promise<string> =>
        ((await connection.client.readResource({ uri })).contents[0] as { text: string }).text;
      expect(await text()).toContain('Version one');
      expect(await text()).toContain('Version one');
      const before = statSync(join(dir, 'plan.pdf')).mtimeMs;
      writeFileSync(join(dir, 'plan.pdf'), two);
      expect(statSync(join(dir, 'plan.pdf')).size).toBe(one.length);
      expect(statSync(join(dir, 'plan.pdf')).mtimeMs).not.toBe(before);
      expect(await text()).toContain('Version two');
    } finally {
      await connection.close();
      await reservoir.close();
      removeTree(dir);
    }
  });
});
