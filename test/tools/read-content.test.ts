// What read_resource gives the model for each kind of content (src/tools/read-content.ts): a text
// resource's text itself with a link (never an embedded copy too), an image a model can look at
// as image content, audio as audio content, and any other binary as a line saying what it is and
// how to read it as text, beside its bytes.
import { describe, expect, it } from 'vitest';
import { binaryNote, modelBlocks } from '../../src/tools/read-content.js';

const BYTES = Buffer.from([0, 1, 2, 3, 4, 5, 6]);
const blob = BYTES.toString('base64');

describe('modelBlocks', () => {
  it('gives a text resource as its text and a resource_link, with no embedded copy', () => {
    expect(
      modelBlocks([{ uri: 'file:///srv/a%20b.md', mimeType: 'text/markdown', text: 'héllo\n' }]),
    ).toEqual([
      { type: 'text', text: 'héllo\n' },
      {
        type: 'resource_link',
        uri: 'file:///srv/a%20b.md',
        name: 'a b.md',
        mimeType: 'text/markdown',
        size: 7,
      },
    ]);
  });

  it('says so for an empty text resource, rather than sending an empty text block', () => {
    const [text] = modelBlocks([
      { uri: 'file:///srv/empty.txt', mimeType: 'text/plain', text: '' },
    ]);
    expect(text).toEqual({
      type: 'text',
      text: 'file:///srv/empty.txt is empty (0 bytes of text/plain).',
    });
  });

  it.each(['image/png', 'image/jpeg', 'image/gif', 'image/webp'])(
    'gives %s as image content after a line saying what it is',
    (mimeType) => {
      expect(modelBlocks([{ uri: 'file:///srv/x', mimeType, blob }])).toEqual([
        { type: 'text', text: `file:///srv/x is an image (${mimeType}, 7 bytes).` },
        { type: 'image', data: blob, mimeType },
      ]);
    },
  );

  it('gives audio as audio content, its MIME type without parameters', () => {
    expect(
      modelBlocks([{ uri: 'file:///srv/a.wav', mimeType: 'audio/wav; codecs=1', blob }]),
    ).toEqual([
      { type: 'text', text: 'file:///srv/a.wav is audio (audio/wav, 7 bytes).' },
      { type: 'audio', data: blob, mimeType: 'audio/wav' },
    ]);
  });

  it('keeps an image type models do not take (SVG, TIFF) as an embedded resource with a note', () => {
    const content = { uri: 'file:///srv/x.tiff', mimeType: 'image/tiff', blob };
    const blocks = modelBlocks([content]);
    expect(blocks[1]).toEqual({ type: 'resource', resource: content });
    expect(blocks[0]).toMatchObject({ type: 'text' });
  });

  it('describes a document and points at its Markdown rendition and byte ranges', () => {
    const content = { uri: 'file:///srv/r.pdf', mimeType: 'application/pdf', blob };
    const [note, resource] = modelBlocks([content]);
    expect(resource).toEqual({ type: 'resource', resource: content });
    const text = (note as { text: string }).text;
    expect(text).toContain('file:///srv/r.pdf is binary (application/pdf, 7 bytes)');
    expect(text).toContain('read_resource with the URI file:///srv/r.pdf?as=markdown');
    expect(text).toContain('file:///srv/r.pdf?bytes=0-65535');
  });

  it('describes other binaries with byte ranges only, joining an existing query with &', () => {
    const text = binaryNote('git://app/main/x.bin?v=1', 'application/octet-stream', 10);
    expect(text).toContain('is binary (application/octet-stream, 10 bytes)');
    expect(text).toContain('git://app/main/x.bin?v=1&bytes=0-65535');
    expect(text).not.toContain('as=markdown');
    expect(binaryNote('file:///srv/x', undefined, 3)).toContain('(unknown type, 3 bytes)');
  });

  it('gives several contents in order, each with its own blocks', () => {
    const blocks = modelBlocks([
      { uri: 'file:///srv/a.txt', mimeType: 'text/plain', text: 'a' },
      { uri: 'file:///srv/b.png', mimeType: 'image/png', blob },
    ]);
    expect(blocks.map((b) => b.type)).toEqual(['text', 'resource_link', 'text', 'image']);
  });
});
