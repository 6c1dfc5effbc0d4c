// pdf.js's legacy build carries core-js, which on Node 20's V8 swaps `Array.prototype.push` for a
// shim in JavaScript that slowed every PDF's text layout by about a quarter: after a PDF renders,
// the engine's own push is in place (on newer engines the shim never installs, and this holds too).
import { describe, expect, it } from 'vitest';
import { renderPdf } from '../../src/documents/pdf.js';
import { DEFAULT_RENDER_LIMITS } from '../../src/documents/types.js';
import { makePdf } from '../helpers/documents.js';

const enginePush = Array.prototype.push;

describe('the PDF renderer and the engine’s Array.prototype.push', () => {
  it('leaves the engine’s own push in place after pdf.js loads both its modules and renders', async () => {
    const pdf = makePdf([{ heading: 'Budget', lines: ['retry budget', 'second line'] }]);
    const rendition = await renderPdf(new Uint8Array(pdf), {}, DEFAULT_RENDER_LIMITS);
    expect(rendition.markdown).toContain('retry budget');
    expect(Array.prototype.push).toBe(enginePush);
    expect(Function.prototype.toString.call(Array.prototype.push)).toContain('[native code]');
    expect(Object.getOwnPropertyDescriptor(Array.prototype, 'push')).toMatchObject({
      writable: true,
      enumerable: false,
      configurable: true,
    });
  });
});
