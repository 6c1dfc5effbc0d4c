// A Reservoir server built with the library: the files provider for a folder, a provider of our own
// (in-memory team notes), a prompt and a tool. Run it after `npm ci`:
//
//   node examples/custom-server.mjs            # MCP over stdio (what desktop hosts spawn)
//   node examples/custom-server.mjs --http     # Streamable HTTP at http://127.0.0.1:7338/mcp
//
// Inside this repository `mcp-reservoir` resolves to the package itself (Node's self-reference).
import { z } from 'zod';
import {
  createLogger,
  createReservoir,
  defineTool,
  filesProvider,
  NotFoundError,
} from 'mcp-reservoir';

/** A provider of our own: notes kept in memory, listed in name order, one page at a time. */
function notesProvider(notes) {
  const names = Object.keys(notes).sort();
  const uriOf = (name) => `notes://team/${encodeURIComponent(name)}`;
  return {
    name: 'notes',
    root: 'notes://team/',
    async list(after, limit) {
      const start = after === undefined ? 0 : names.indexOf(after) + 1;
      const page = names.slice(start, start + limit);
      const items = page.map((name) => ({
        uri: uriOf(name),
        name,
        mimeType: 'text/markdown',
        size: Buffer.byteLength(notes[name]),
      }));
      return start + limit < names.length ? { items, last: page.at(-1) } : { items };
    },
    isValidKey: (key) => names.includes(key),
    async read(uri) {
      const name = decodeURIComponent(uri.slice('notes://team/'.length));
      if (!(name in notes)) throw new NotFoundError(uri);
      return { contents: [{ uri, mimeType: 'text/markdown', text: notes[name] }] };
    },
  };
}

const reservoir = createReservoir({
  logger: createLogger('info'),
  providers: [
    filesProvider({ root: new URL('../docs', import.meta.url).pathname }),
    notesProvider({
      'release plan': '# Release plan\n\nShip on Friday.',
      standup: '# Stand-up\n\nAll green.',
    }),
  ],
  prompts: [
    {
      name: 'review_note',
      title: 'Review a note',
      description: 'Ask for a critical review of one team note',
      arguments: [
        {
          name: 'note',
          description: 'The note name',
          required: true,
          complete: (value) => ({
            values: ['release plan', 'standup'].filter((n) => n.startsWith(value)),
          }),
        },
      ],
      messages: ({ note }) => [
        {
          role: 'user',
          content: { type: 'text', text: 'Review this note critically and list open questions.' },
        },
        {
          role: 'user',
          content: { type: 'resource_ref', uri: `notes://team/${encodeURIComponent(note)}` },
        },
      ],
    },
  ],
  tools: [
    defineTool({
      name: 'word_count',
      description: 'Counts the words of any text resource this server serves, given its URI.',
      input: z.object({ uri: z.string().describe('The resource URI, e.g. notes://team/standup') }),
      output: z.object({ words: z.number() }),
      annotations: { readOnlyHint: true },
      async call({ uri }, ctx) {
        const { contents } = await reservoir.registry.read(uri, ctx);
        const words = contents
          .map((c) => ('text' in c ? c.text : ''))
          .join(' ')
          .split(/\s+/)
          .filter(Boolean).length;
        return {
          content: [{ type: 'text', text: `${words} words` }],
          structuredContent: { words },
        };
      },
    }),
  ],
});

if (process.argv.includes('--http')) {
  const { url } = await reservoir.listen({ port: 7338 });
  reservoir.logger.info({ url }, `serving at ${url}`);
} else {
  await reservoir.serveStdio().closed;
  await reservoir.close();
}
for (const signal of ['SIGINT', 'SIGTERM'])
  process.once(signal, () => void reservoir.close().then(() => process.exit(0)));
