// Reads of documents, through the real SDK client: from a files root (the built CLI over stdio, with
// a state directory) and from a git repository at any ref (in process), a document's read answers
// its Markdown rendition first and the original bytes after; ?as=markdown and ?as=bytes answer one
// of them; ?pages=, ?sheet=&range=, ?slides= answer parts, with out-of-range parts refused naming
// the valid range; the document template completes sheet names and page counts; a zip bomb is a
// clear error and the server keeps serving; a restart serves renditions from the state directory.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProtocolError } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup, connectStdio, type StdioConnection } from '../helpers/clients.js';
import { makeDocx, makePdf, makePptx, makeXlsx, makeZipBomb } from '../helpers/documents.js';
import { fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { commit, git, makeRepo, repoName } from '../providers/git-helpers.js';
import { removeDir } from '../providers/helpers.js';
import { connectInProcess, type InProcessStdio } from '../subscriptions/harness.js';
import { gitProvider } from '../../src/providers/git/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';

type Content = { uri: string; mimeType?: string; text?: string; blob?: string };

const PDF = makePdf([
  { heading: 'Handbook', lines: ['Welcome to the onboarding handbook.'] },
  { lines: ['Page two is about expenses.'] },
  { lines: ['Page three is about travel.'] },
]);
const DECK = makePptx([{ title: 'Kick-off' }, { title: 'Plan', bullets: ['Ship it'] }]);

async function refusal(promise: Promise<unknown>): Promise<ProtocolError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProtocolError);
  return error as ProtocolError;
}

describe('documents from a files root, over stdio', () => {
  const cleanup = new Cleanup();
  let dir: string;
  let state: string;
  let server: StdioConnection;
  let xlsx: Buffer;
  const uri = (name: string): string => fileUri(join(dir, 'docs'), name);

  beforeAll(async () => {
    await ensureBuilt();
    dir = makeTempDir();
    state = join(dir, 'state');
    xlsx = await makeXlsx({
      Budget: [
        ['Item', 'Cost'],
        ['Rent', 900],
        ['Food', 250],
      ],
      Staff: [['Ann']],
    });
    writeTree(dir, {
      'docs/handbook.pdf': PDF,
      'docs/budget.xlsx': xlsx,
      'docs/deck.pptx': DECK,
      'docs/spec.docx': makeDocx([{ heading: 'Spec' }, { paragraph: 'Widgets are blue.' }]),
      'docs/bomb.docx': makeZipBomb('word/document.xml', 40 * 1024 * 1024),
      'docs/notes.md': '# Notes\n',
    });
    server = await connectStdio('2026', [join(dir, 'docs')], ['--state-dir', state], cleanup);
  }, 180_000);

  afterAll(async () => {
    await cleanup.run();
    removeTree(dir);
  });

  it('answers the Markdown rendition first and the original bytes second', async () => {
    const read = await server.client.readResource({ uri: uri('handbook.pdf') });
    const [markdown, original] = read.contents as Content[];
    expect(markdown).toMatchObject({ uri: uri('handbook.pdf'), mimeType: 'text/markdown' });
    expect(markdown!.text).toContain('Welcome to the onboarding handbook.');
    expect(markdown!.text).toContain('<!-- page 3 -->');
    expect(original!.mimeType).toBe('application/pdf');
    expect(Buffer.from(original!.blob!, 'base64').equals(PDF)).toBe(true);
  });

  it('answers ?as=markdown with the rendition alone and ?as=bytes with the original alone, byte for byte', async () => {
    const markdown = await server.client.readResource({ uri: `${uri('spec.docx')}?as=markdown` });
    expect(markdown.contents).toHaveLength(1);
    expect((markdown.contents[0] as Content).text).toContain('Widgets are blue.');
    const bytes = await server.client.readResource({ uri: `${uri('budget.xlsx')}?as=bytes` });
    expect(bytes.contents).toHaveLength(1);
    expect(Buffer.from((bytes.contents[0] as Content).blob!, 'base64').equals(xlsx)).toBe(true);
  });

  it('reads pages, a sheet with a cell range, and slides as parts', async () => {
    const pages = await server.client.readResource({ uri: `${uri('handbook.pdf')}?pages=2-3` });
    const text = (pages.contents[0] as Content).text!;
    expect(text).toContain('expenses');
    expect(text).not.toContain('onboarding');
    const sheet = await server.client.readResource({
      uri: `${uri('budget.xlsx')}?sheet=Budget&range=A2:B3`,
    });
    expect((sheet.contents[0] as Content).text).toContain('| 2 | Rent | 900 |');
    const slides = await server.client.readResource({ uri: `${uri('deck.pptx')}?slides=2` });
    expect((slides.contents[0] as Content).text).toContain('Ship it');
    expect((slides.contents[0] as Content).text).not.toContain('Kick-off');
  });

  it('refuses a part out of range with an invalid-argument error naming the valid range', async () => {
    const pages = await refusal(
      server.client.readResource({ uri: `${uri('handbook.pdf')}?pages=4-9` }),
    );
    expect(pages.code).toBe(-32602);
    expect(pages.message).toContain('1-3');
    const sheet = await refusal(
      server.client.readResource({ uri: `${uri('budget.xlsx')}?sheet=Costs` }),
    );
    expect(sheet.message).toContain('"Budget", "Staff"');
    const malformed = await refusal(
      server.client.readResource({ uri: `${uri('handbook.pdf')}?pages=two` }),
    );
    expect(malformed.code).toBe(-32602);
    const wrongKind = await refusal(
      server.client.readResource({ uri: `${uri('deck.pptx')}?pages=1` }),
    );
    expect(wrongKind.message).toContain('pages= applies to PDFs');
    const notDocument = await refusal(
      server.client.readResource({ uri: `${uri('notes.md')}?slides=1` }),
    );
    expect(notDocument.code).toBe(-32602);
  });

  it('offers the document template and completes sheet names and page counts', async () => {
    const templates = (await server.client.listResourceTemplates()).resourceTemplates.map(
      (t) => t.uriTemplate,
    );
    const template = templates.find((t) =>
      t.endsWith('/docs/{+path}{?as,pages,sheet,range,slides}'),
    );
    if (template === undefined) throw new Error(`no document template in ${templates.join(', ')}`);
    const sheets = await server.client.complete({
      ref: { type: 'ref/resource', uri: template },
      argument: { name: 'sheet', value: 'B' },
      context: { arguments: { path: 'budget.xlsx' } },
    });
    expect(sheets.completion.values).toEqual(['Budget']);
    const pages = await server.client.complete({
      ref: { type: 'ref/resource', uri: template },
      argument: { name: 'pages', value: '' },
      context: { arguments: { path: 'handbook.pdf' } },
    });
    expect(pages.completion.values).toEqual(['1-3', '1', '2', '3']);
  });

  it('answers a zip bomb with a too-large error and goes on serving', async () => {
    const bomb = await refusal(server.client.readResource({ uri: uri('bomb.docx') }));
    expect(bomb.code).toBe(-32010);
    expect(bomb.message).toContain('zip bomb');
    const after = await server.client.readResource({ uri: `${uri('notes.md')}` });
    expect((after.contents[0] as Content).text).toBe('# Notes\n');
  });

  it('serves renditions from the state directory after a restart, without converting again', async () => {
    await server.client.readResource({ uri: `${uri('deck.pptx')}?as=markdown` });
    await server.close();
    // Mark every cached rendition: a restarted server that answers the mark did not convert again.
    const folder = join(state, 'renditions');
    const files = readdirSync(folder).filter((f) => f.endsWith('.json'));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const rendition = JSON.parse(readFileSync(join(folder, file), 'utf8')) as {
        markdown: string;
      };
      writeFileSync(
        join(folder, file),
        JSON.stringify({ ...rendition, markdown: `${rendition.markdown}CACHED\n` }),
      );
    }
    server = await connectStdio('2026', [join(dir, 'docs')], ['--state-dir', state], cleanup);
    const read = await server.client.readResource({ uri: `${uri('deck.pptx')}?as=markdown` });
    expect((read.contents[0] as Content).text).toContain('CACHED');
  });
});

describe('documents from a git repository, at any ref', () => {
  let repo: string;
  let reservoir: Reservoir;
  let connection: InProcessStdio;

  beforeAll(async () => {
    await ensureBuilt();
    repo = makeRepo({ 'handbook.pdf': PDF });
    git(repo, 'tag', 'v1');
    commit(repo, { 'handbook.pdf': makePdf([{ lines: ['The second edition.'] }]) }, 'edition two');
    reservoir = createReservoir({ providers: [gitProvider({ path: repo })] });
    connection = await connectInProcess(reservoir, '2025');
  }, 180_000);

  afterAll(async () => {
    await connection?.close();
    await reservoir?.close();
    removeDir(repo);
  });

  it('renders the document as it is at each ref', async () => {
    const root = `git://${repoName(repo)}/`;
    const now = await connection.client.readResource({ uri: `${root}main/handbook.pdf` });
    expect((now.contents[0] as Content).mimeType).toBe('text/markdown');
    expect((now.contents[0] as Content).text).toContain('The second edition.');
    const before = await connection.client.readResource({
      uri: `${root}v1/handbook.pdf?pages=1`,
    });
    expect((before.contents[0] as Content).text).toContain('onboarding handbook');
    expect(before.contents).toHaveLength(1);
  });
});
