// The runnable library example (examples/custom-server.mjs) works for a real client: its own
// provider, prompt and tool sit beside the files provider, in both protocol eras.
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const example = fileURLToPath(new URL('../../examples/custom-server.mjs', import.meta.url));

describe.each([
  ['2025-11-25', {}],
  ['2026-07-28', { versionNegotiation: { mode: { pin: '2026-07-28' } } }],
] as const)('examples/custom-server.mjs (%s)', (_era, options) => {
  let client: Client;

  beforeAll(async () => {
    client = new Client({ name: 'example-test', version: '1' }, options);
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [example], stderr: 'ignore' }),
    );
  });
  afterAll(async () => client.close());

  it('lists the notes provider beside the files provider', async () => {
    const { resources } = await client.listResources({});
    const uris = resources.map((r) => r.uri);
    expect(uris).toContain('notes://team/release%20plan');
    expect(uris).toContain('notes://team/standup');
    expect(uris.some((u) => u.startsWith('file://'))).toBe(true);
  });

  it('reads a note through its own provider', async () => {
    const { contents } = await client.readResource({ uri: 'notes://team/standup' });
    expect(contents).toEqual([
      { uri: 'notes://team/standup', mimeType: 'text/markdown', text: '# Stand-up\n\nAll green.' },
    ]);
  });

  it('gets the prompt with the note embedded, and names a missing argument', async () => {
    const { messages } = await client.getPrompt({
      name: 'review_note',
      arguments: { note: 'standup' },
    });
    expect(messages[1]?.content).toEqual({
      type: 'resource',
      resource: {
        uri: 'notes://team/standup',
        mimeType: 'text/markdown',
        text: '# Stand-up\n\nAll green.',
      },
    });
    await expect(client.getPrompt({ name: 'review_note', arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: "Invalid argument 'note': required by prompt 'review_note'",
    });
  });

  it('completes the prompt argument by prefix', async () => {
    const { completion } = await client.complete({
      ref: { type: 'ref/prompt', name: 'review_note' },
      argument: { name: 'note', value: 're' },
    });
    expect(completion).toEqual({ values: ['release plan'], total: 1, hasMore: false });
  });

  it('calls the tool, reports its failure and bad arguments as isError results', async () => {
    const ok = await client.callTool({
      name: 'word_count',
      arguments: { uri: 'notes://team/release plan' },
    });
    expect(ok.structuredContent).toEqual({ words: 6 });
    const failed = await client.callTool({
      name: 'word_count',
      arguments: { uri: 'notes://team/nope' },
    });
    expect(failed).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'Resource not found: notes://team/nope' }],
    });
    // An argument the input schema refuses is an isError result naming it; an unknown tool, -32602.
    expect(await client.callTool({ name: 'word_count', arguments: { uri: 5 } })).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: expect.stringContaining("Invalid argument 'uri'") }],
    });
    await expect(client.callTool({ name: 'missing_tool', arguments: {} })).rejects.toMatchObject({
      code: -32602,
    });
  });
});
