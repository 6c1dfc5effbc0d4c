// Search sees inside documents, through the real SDK client over the built CLI's stdio: a word that
// occurs only inside a PDF page, a spreadsheet cell or a slide finds that resource, with a snippet
// cut from its rendition and the page, sheet or slide it was on; a document that cannot be rendered
// (a zip bomb) is indexed by its name alone and the rest of the index is built.
import { join } from 'node:path';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup, connectStdio } from '../helpers/clients.js';
import { makePdf, makePptx, makeXlsx, makeZipBomb } from '../helpers/documents.js';
import { fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { textOf } from '../tools/helpers.js';

interface Hit {
  uri: string;
  snippet: string;
  highlights: [number, number][];
  part?: string;
}

describe('search inside documents', () => {
  const cleanup = new Cleanup();
  let dir: string;
  let client: Client;
  const uri = (name: string): string => fileUri(join(dir, 'docs'), name);

  const search = async (query: string): Promise<{ hits: Hit[]; text: string }> => {
    const result = (await client.callTool({
      name: 'search_resources',
      arguments: { query },
    })) as CallToolResult;
    expect(result.isError ?? false, textOf(result)).toBe(false);
    return {
      hits: (result.structuredContent as unknown as { hits: Hit[] }).hits,
      text: textOf(result),
    };
  };

  /** The hits for `query` once the first build has indexed everything (the build runs in the background). */
  const built = async (query: string): Promise<{ hits: Hit[]; text: string }> => {
    for (;;) {
      const result = (await client.callTool({
        name: 'search_resources',
        arguments: { query },
      })) as CallToolResult;
      const data = result.structuredContent as unknown as { hits: Hit[]; indexing?: unknown };
      if (data.indexing === undefined) return { hits: data.hits, text: textOf(result) };
      await new Promise((resolve) => setImmediate(resolve));
    }
  };

  beforeAll(async () => {
    await ensureBuilt();
    dir = makeTempDir();
    cleanup.add(() => removeTree(dir));
    writeTree(dir, {
      'docs/handbook.pdf': makePdf([
        { heading: 'Handbook', lines: ['Welcome aboard.'] },
        { lines: ['Expenses are filed monthly.'] },
        { lines: ['Travel needs a quokka permit.'] },
      ]),
      'docs/budget.xlsx': await makeXlsx({
        Summary: [['Total', 1150]],
        Budget: [
          ['Item', 'Cost'],
          ['Marzipan', 900],
        ],
      }),
      'docs/deck.pptx': makePptx([
        { title: 'Kick-off' },
        { title: 'Plan', bullets: ['Launch the zeppelin'] },
      ]),
      'docs/bomb.docx': makeZipBomb('word/document.xml', 40 * 1024 * 1024),
      'docs/notes.md': '# Notes\n\nNothing about permits here.\n',
    });
    const state = join(dir, 'state');
    client = (await connectStdio('2026', [join(dir, 'docs')], ['--state-dir', state], cleanup))
      .client;
  }, 180_000);

  afterAll(() => cleanup.run());

  it('finds a word that occurs only on a PDF page, with the page it was on', async () => {
    const { hits, text } = await built('quokka');
    expect(hits.map((h) => h.uri)).toEqual([uri('handbook.pdf')]);
    expect(hits[0]!.part).toBe('page 3');
    const [start, end] = hits[0]!.highlights[0]!;
    expect(hits[0]!.snippet.slice(start, end).toLowerCase()).toBe('quokka');
    expect(text).toContain(`${uri('handbook.pdf')} (page 3)`);
  });

  it('finds a word that occurs only in a spreadsheet cell, with its sheet', async () => {
    const { hits } = await built('marzipan');
    expect(hits.map((h) => [h.uri, h.part])).toEqual([[uri('budget.xlsx'), 'sheet Budget']]);
  });

  it('finds a word that occurs only on a slide, with its slide', async () => {
    const { hits } = await built('zeppelin');
    expect(hits.map((h) => [h.uri, h.part])).toEqual([[uri('deck.pptx'), 'slide 2']]);
  });

  it('gives a text file no part, and indexes a document it cannot render by its name alone', async () => {
    const permits = await built('permits');
    expect(permits.hits.map((h) => h.uri)).toEqual([uri('notes.md')]);
    expect(permits.hits[0]!.part).toBeUndefined();
    const bomb = await search('bomb');
    expect(bomb.hits.map((h) => h.uri)).toEqual([uri('bomb.docx')]);
  });
});
