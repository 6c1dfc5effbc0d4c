// Conversions run in a pool of workers: never more at once than the pool's size, side by side up to
// it; a breach (here a worker out of heap) ends only the job of the worker that breached, while the
// other worker's conversion completes; an idle worker retires and a later job starts a fresh one.
import { availableParallelism } from 'node:os';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DocumentRenderer } from '../../src/documents/index.js';
import { DocumentPool } from '../../src/documents/pool.js';
import { DEFAULT_RENDER_LIMITS, type DocumentKind } from '../../src/documents/types.js';
import { ensureBuilt } from '../helpers/build.js';
import { makePdf } from '../helpers/documents.js';
import { eventually } from '../helpers/eventually.js';

const renderers: DocumentRenderer[] = [];
const open = (options: ConstructorParameters<typeof DocumentRenderer>[0]): DocumentRenderer => {
  const renderer = new DocumentRenderer(options);
  renderers.push(renderer);
  return renderer;
};

beforeAll(async () => {
  await ensureBuilt();
}, 180_000);
afterEach(async () => {
  await Promise.all(renderers.splice(0).map((r) => r.close()));
});

describe('the document worker pool', () => {
  it('converts side by side in as many workers as its size, and never starts more', async () => {
    const renderer = open({ workers: 2, limits: { ocr: false } });
    const pdfs = Array.from({ length: 6 }, (_, i) => makePdf([{ lines: [`document ${i} alone`] }]));
    const renditions = await Promise.all(
      pdfs.map((pdf, i) => renderer.render(pdf, 'application/pdf', `file:///d/${i}.pdf`)),
    );
    renditions.forEach((r, i) => expect(r.markdown).toContain(`document ${i} alone`));
    expect(renderer.workers).toMatchObject({ size: 2, peak: 2 });
    expect(renderer.workersStarted).toBe(2);
  });

  it('ends only the job of a worker that breaches its bounds; the other worker completes its own', async () => {
    const renderer = open({
      workers: 2,
      limits: { ocr: false, maxHeapMb: 32, maxOutputChars: 1 << 30, timeoutMs: 300_000 },
    });
    // A PDF of many pages (a long conversion that fits the heap), then a CSV whose table outgrows it.
    const pages = Array.from({ length: 100 }, (_, i) => ({
      lines: [`page ${i + 1} of the long report`, 'more words on every page of it'],
    }));
    const rows = Array.from({ length: 400_000 }, (_, i) => `${i},some text in a cell,${i * 2}`);
    const [long, bomb] = await Promise.allSettled([
      renderer.render(makePdf(pages), 'application/pdf', 'file:///d/long.pdf'),
      renderer.render(Buffer.from(rows.join('\n')), 'text/csv', 'file:///d/big.csv'),
    ]);
    expect(bomb).toMatchObject({
      status: 'rejected',
      reason: { code: 'too_large', data: { measure: 'conversion memory' } },
    });
    expect(long.status).toBe('fulfilled');
    expect((long as PromiseFulfilledResult<{ markdown: string }>).value.markdown).toContain(
      'page 100 of the long report',
    );
    // Both ran at once, each in its own worker, and the PDF's worker was never replaced.
    expect(renderer.workers.peak).toBe(2);
    expect(renderer.workersStarted).toBe(2);
  });

  it('retires a worker left idle, and starts a fresh one for the next job', async () => {
    const renderer = open({ workers: 2, workerIdleMs: 0, limits: { ocr: false } });
    const pdf = makePdf([{ lines: ['converted once'] }]);
    await renderer.render(pdf, 'application/pdf', 'file:///d/once.pdf');
    await eventually(() => renderer.workers.alive === 0, 'the idle worker to retire', {
      deadlineMs: 60_000,
    });
    const again = makePdf([{ lines: ['converted twice'] }]);
    const r = await renderer.render(again, 'application/pdf', 'file:///d/twice.pdf');
    expect(r.markdown).toContain('converted twice');
    expect(renderer.workersStarted).toBe(2);
  });

  it('answers conversions still running or queued when it is closed as unavailable', async () => {
    const renderer = open({ workers: 1, limits: { ocr: false } });
    const pdf = (text: string): Buffer => makePdf([{ lines: [text] }]);
    const running = renderer.render(pdf('first'), 'application/pdf', 'file:///d/1.pdf');
    const queued = renderer.render(pdf('second'), 'application/pdf', 'file:///d/2.pdf');
    const settled = Promise.allSettled([running, queued]);
    await renderer.close();
    for (const outcome of await settled)
      expect(outcome).toMatchObject({ status: 'rejected', reason: { code: 'unavailable' } });
  });

  it('ends the job of a worker that answers with neither a conversion nor a failure, and goes on with a fresh one', async () => {
    const pool = new DocumentPool({ ...DEFAULT_RENDER_LIMITS, ocr: false }, { size: 1 });
    try {
      // The worker converts a kind it does not know to nothing: its reply carries neither.
      const odd = pool.render('file:///d/x.odd', Buffer.from('x'), 'odd' as DocumentKind, {});
      await expect(odd).rejects.toMatchObject({
        code: 'invalid_document',
        message: expect.stringContaining('answered with neither a conversion nor a failure'),
      });
      const pdf = makePdf([{ lines: ['converted after it'] }]);
      const r = await pool.render('file:///d/next.pdf', pdf, 'pdf', {});
      expect(r.markdown).toContain('converted after it');
      expect(pool.started).toBe(2);
    } finally {
      await pool.close();
    }
  });

  it('sizes itself by the cores the process may use, at most four, and refuses a size below one', () => {
    expect(open({}).workers.size).toBe(Math.min(4, availableParallelism()));
    expect(() => new DocumentRenderer({ workers: 0 })).toThrow(/workers must be a whole number/);
    expect(() => new DocumentRenderer({ workers: 1.5 })).toThrow(/workers must be a whole number/);
  });
});
