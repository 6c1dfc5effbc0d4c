// The conformance fixture server (examples/everything/server.mjs) over stdio, driven by the real SDK
// client in both protocol eras: every fixture tool, resource, prompt and completion. The tools and
// the prompt that need the client answer through the client's own request handlers — as real
// server-to-client requests on 2025-11-25, as input_required rounds the v2 client fulfils and
// retries by itself on 2026-07-28 — so the same handler code is proven in both eras.
import { fileURLToPath } from 'node:url';
import {
  Client,
  LOG_LEVEL_META_KEY,
  type ClientCapabilities,
  type CallToolResult,
} from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';

const SERVER = fileURLToPath(new URL('../../examples/everything/server.mjs', import.meta.url));
const ALL_CAPABILITIES: ClientCapabilities = {
  elicitation: { form: {} },
  sampling: {},
  roots: { listChanged: true },
};

type Era = '2025-11-25' | '2026-07-28';
const ERAS: Era[] = ['2025-11-25', '2026-07-28'];

interface Recorded {
  elicitations: { message: string; requestedSchema: Record<string, unknown> }[];
  samplings: unknown[];
  roots: number;
  logs: unknown[];
  listChanged: string[];
  /** Every message the transport received, in wire order (below the client's own dispatch). */
  wire: Record<string, unknown>[];
}

async function connect(
  era: Era,
  capabilities: ClientCapabilities = ALL_CAPABILITIES,
): Promise<{ client: Client; seen: Recorded }> {
  const client = new Client(
    { name: 'everything-test', version: '1' },
    {
      capabilities,
      ...(era === '2026-07-28' ? { versionNegotiation: { mode: { pin: era } } } : {}),
    },
  );
  const seen: Recorded = {
    elicitations: [],
    samplings: [],
    roots: 0,
    logs: [],
    listChanged: [],
    wire: [],
  };
  if (capabilities.elicitation !== undefined) {
    client.setRequestHandler('elicitation/create', async (request) => {
      const params = request.params as {
        message: string;
        requestedSchema: Record<string, unknown>;
      };
      seen.elicitations.push(params);
      const fields = Object.keys((params.requestedSchema.properties ?? {}) as object);
      const content: Record<string, string | number | boolean> = {};
      for (const field of fields) {
        content[field] =
          {
            name: 'Ann',
            username: 'ann',
            email: 'ann@example.com',
            ok: true,
            color: 'teal',
            context: 'release notes',
            value: 'v',
          }[field] ?? 'x';
      }
      if (fields.includes('age'))
        Object.assign(content, {
          name: 'Jane Smith',
          age: 25,
          score: 88,
          status: 'inactive',
          verified: false,
        });
      if (fields.includes('untitledSingle')) return { action: 'decline' };
      return { action: 'accept', content };
    });
  }
  if (capabilities.sampling !== undefined) {
    client.setRequestHandler('sampling/createMessage', async (request) => {
      seen.samplings.push(request.params);
      return {
        role: 'assistant',
        content: { type: 'text', text: 'Paris' },
        model: 'test-model',
        stopReason: 'endTurn',
      };
    });
  }
  if (capabilities.roots !== undefined) {
    client.setRequestHandler('roots/list', async () => {
      seen.roots += 1;
      return { roots: [{ uri: 'file:///work', name: 'work' }] };
    });
  }
  client.setNotificationHandler(
    'notifications/message',
    (notification) => void seen.logs.push(notification.params.data),
  );
  client.setNotificationHandler(
    'notifications/tools/list_changed',
    () => void seen.listChanged.push('tools'),
  );
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [SERVER],
    stderr: 'ignore',
  });
  await client.connect(transport);
  const deliver = transport.onmessage;
  transport.onmessage = (message) => {
    seen.wire.push(message as unknown as Record<string, unknown>);
    deliver?.(message);
  };
  return { client, seen };
}

const textOf = (result: unknown): string =>
  ((result as CallToolResult).content as { type: string; text?: string }[])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');

beforeAll(async () => ensureBuilt(), 120_000);

describe.each(ERAS)('examples/everything/server.mjs over stdio (%s)', (era) => {
  let client: Client;
  let seen: Recorded;

  beforeAll(async () => {
    ({ client, seen } = await connect(era));
  });
  afterAll(async () => client.close());

  it('lists every fixture tool, each with a description and an input schema', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const name of [
      'test_simple_text',
      'test_image_content',
      'test_audio_content',
      'test_embedded_resource',
      'test_multiple_content_types',
      'test_tool_with_logging',
      'test_tool_with_progress',
      'test_error_handling',
      'test_sampling',
      'test_elicitation',
      'test_elicitation_sep1034_defaults',
      'test_elicitation_sep1330_enums',
      'test_missing_capability',
      'test_logging_tool',
      'test_streaming_elicitation',
      'test_trigger_tool_change',
      'test_trigger_prompt_change',
      'test_reconnection',
      'test_input_required_result_elicitation',
      'test_input_required_result_sampling',
      'test_input_required_result_list_roots',
      'test_input_required_result_request_state',
      'test_input_required_result_multiple_inputs',
      'test_input_required_result_multi_round',
      'test_input_required_result_tampered_state',
      'test_input_required_result_capabilities',
    ]) {
      expect(names).toContain(name);
    }
    for (const tool of tools) {
      expect(tool.description, tool.name).toBeTruthy();
      expect(tool.inputSchema.type).toBe('object');
    }
  });

  it('returns text, image, audio, embedded and mixed content', async () => {
    expect(textOf(await client.callTool({ name: 'test_simple_text' }))).toBe(
      'This is a simple text response for testing.',
    );
    expect((await client.callTool({ name: 'test_image_content', arguments: {} })).content).toEqual([
      { type: 'image', data: expect.stringMatching(/^iVBOR/), mimeType: 'image/png' },
    ]);
    expect((await client.callTool({ name: 'test_audio_content', arguments: {} })).content).toEqual([
      { type: 'audio', data: expect.stringMatching(/^UklGR/), mimeType: 'audio/wav' },
    ]);
    expect(
      (await client.callTool({ name: 'test_embedded_resource', arguments: {} })).content,
    ).toEqual([
      {
        type: 'resource',
        resource: {
          uri: 'test://embedded-resource',
          mimeType: 'text/plain',
          text: 'This is an embedded resource content.',
        },
      },
    ]);
    const mixed = (await client.callTool({ name: 'test_multiple_content_types', arguments: {} }))
      .content as { type: string }[];
    expect(mixed.map((c) => c.type)).toEqual(['text', 'image', 'resource']);
  });

  it('answers a failing tool with an isError result', async () => {
    const result = await client.callTool({ name: 'test_error_handling', arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('intentionally');
  });

  it('reports progress before the result', async () => {
    const progress: number[] = [];
    const from = seen.wire.length;
    const result = await client.callTool(
      { name: 'test_tool_with_progress', arguments: {} },
      { onprogress: (p) => void progress.push(p.progress) },
    );
    expect(textOf(result)).toContain('progress');
    // On the wire: three progress notifications, then the result. (The v2 client dispatches
    // notifications a microtask late but responses at once, so when the last notification and the
    // result arrive in one read its callback can be dropped: check the wire, not only the callback.)
    const wire = seen.wire.slice(from);
    const notified = wire
      .filter((m) => m['method'] === 'notifications/progress')
      .map((m) => (m['params'] as { progress: number }).progress);
    expect(notified).toEqual([0, 50, 100]);
    expect(wire.findIndex((m) => 'result' in m)).toBeGreaterThan(
      wire.findLastIndex((m) => m['method'] === 'notifications/progress'),
    );
    expect([0, 50, 100].slice(0, progress.length)).toEqual(progress);
    expect(progress.length).toBeGreaterThanOrEqual(2);
  });

  it('sends log messages only at a level the client asked for', async () => {
    seen.logs.length = 0;
    // Below the level asked for: 2026 asks per request (none here), 2025 with logging/setLevel.
    if (era === '2025-11-25') await client.setLoggingLevel('warning');
    await client.callTool({ name: 'test_logging_tool', arguments: {} });
    await client.ping().catch(() => undefined); // a round trip, so a stray log would have arrived
    expect(seen.logs).toEqual([]);
    if (era === '2025-11-25') await client.setLoggingLevel('info');
    const meta = era === '2026-07-28' ? { _meta: { [LOG_LEVEL_META_KEY]: 'info' } } : {};
    await client.callTool({ name: 'test_tool_with_logging', arguments: {}, ...meta });
    await expect
      .poll(() => seen.logs)
      .toEqual(['Tool execution started', 'Tool processing data', 'Tool execution completed']);
  });

  it('samples through the client (test_sampling)', async () => {
    const result = await client.callTool({
      name: 'test_sampling',
      arguments: { prompt: 'Capital of France?' },
    });
    expect(textOf(result)).toBe('LLM response: Paris');
    expect(seen.samplings.at(-1)).toMatchObject({
      messages: [{ role: 'user', content: { type: 'text', text: 'Capital of France?' } }],
      maxTokens: 100,
    });
  });

  it('elicits through the client (test_elicitation, SEP-1034 defaults, SEP-1330 enums)', async () => {
    const result = await client.callTool({
      name: 'test_elicitation',
      arguments: { message: 'Who are you?' },
    });
    expect(textOf(result)).toBe(
      'User response: action=accept, content={"username":"ann","email":"ann@example.com"}',
    );
    expect(seen.elicitations.at(-1)).toMatchObject({
      message: 'Who are you?',
      requestedSchema: { required: ['username', 'email'] },
    });

    const defaults = await client.callTool({
      name: 'test_elicitation_sep1034_defaults',
      arguments: {},
    });
    expect(textOf(defaults)).toContain('"name":"Jane Smith","age":25');
    expect(seen.elicitations.at(-1)?.requestedSchema.properties).toMatchObject({
      name: { type: 'string', default: 'John Doe' },
      age: { type: 'integer', default: 30 },
      score: { type: 'number', default: 95.5 },
      status: { type: 'string', enum: ['active', 'inactive', 'pending'], default: 'active' },
      verified: { type: 'boolean', default: true },
    });

    const enums = await client.callTool({ name: 'test_elicitation_sep1330_enums', arguments: {} });
    expect(textOf(enums)).toBe('Elicitation completed: action=decline, content={}');
    const properties = seen.elicitations.at(-1)?.requestedSchema.properties as Record<
      string,
      Record<string, unknown>
    >;
    expect(properties['legacyEnum']).toMatchObject({
      enumNames: ['Option One', 'Option Two', 'Option Three'],
    });
    expect(properties['titledSingle']?.['oneOf']).toHaveLength(3);
    expect((properties['titledMulti']?.['items'] as Record<string, unknown>)['anyOf']).toHaveLength(
      3,
    );
  });

  it('asks for input and completes in one call (test_input_required_result_*)', async () => {
    expect(
      textOf(
        await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} }),
      ),
    ).toBe('Hello, Ann!');
    expect(
      textOf(await client.callTool({ name: 'test_input_required_result_sampling', arguments: {} })),
    ).toBe('Sampling result: Paris');
    expect(
      textOf(
        await client.callTool({ name: 'test_input_required_result_list_roots', arguments: {} }),
      ),
    ).toBe('Found 1 root(s): file:///work');
    expect(
      textOf(
        await client.callTool({ name: 'test_input_required_result_request_state', arguments: {} }),
      ),
    ).toContain('state-ok');
    expect(
      textOf(
        await client.callTool({
          name: 'test_input_required_result_multiple_inputs',
          arguments: {},
        }),
      ),
    ).toBe('Name: Ann; Greeting: Paris; Roots: 1');
    expect(
      textOf(
        await client.callTool({ name: 'test_input_required_result_multi_round', arguments: {} }),
      ),
    ).toBe('Multi-round complete for Ann who likes teal');
    expect(
      textOf(
        await client.callTool({ name: 'test_input_required_result_tampered_state', arguments: {} }),
      ),
    ).toBe('integrity-ok: state verified');
    expect(
      textOf(
        await client.callTool({ name: 'test_input_required_result_capabilities', arguments: {} }),
      ),
    ).toBe('capabilities-ok: received elicit_input,sample_input');
    expect(
      textOf(await client.callTool({ name: 'test_streaming_elicitation', arguments: {} })),
    ).toBe('Streaming complete: accept');
    expect(textOf(await client.callTool({ name: 'test_missing_capability', arguments: {} }))).toBe(
      'Success: Paris',
    );
  });

  it('renders a prompt that needs input first (test_input_required_result_prompt)', async () => {
    const { messages } = await client.getPrompt({ name: 'test_input_required_result_prompt' });
    expect(messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'Prompt with context: release notes' } },
    ]);
  });

  it('lists, reads and templates the test:// resources', async () => {
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual([
      'test://static-text',
      'test://static-binary',
      'test://watched-resource',
    ]);
    expect((await client.readResource({ uri: 'test://static-text' })).contents).toEqual([
      {
        uri: 'test://static-text',
        mimeType: 'text/plain',
        text: 'This is the content of the static text resource.',
      },
    ]);
    expect((await client.readResource({ uri: 'test://static-binary' })).contents).toEqual([
      { uri: 'test://static-binary', mimeType: 'image/png', blob: expect.stringMatching(/^iVBOR/) },
    ]);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates).toEqual([
      expect.objectContaining({
        uriTemplate: 'test://template/{id}/data',
        mimeType: 'application/json',
      }),
    ]);
    const { contents } = await client.readResource({ uri: 'test://template/123/data' });
    expect(JSON.parse((contents[0] as { text: string }).text)).toEqual({
      id: '123',
      templateTest: true,
      data: 'Data for ID: 123',
    });
    // -32002 on the 2025 wire, -32602 on the 2026 one; the SDK client surfaces both as ResourceNotFoundError (-32602).
    await expect(client.readResource({ uri: 'test://nonexistent' })).rejects.toMatchObject({
      code: -32602,
      data: { uri: 'test://nonexistent' },
    });
  });

  it('lists and renders every fixture prompt, and completes its argument', async () => {
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(
      expect.arrayContaining([
        'test_simple_prompt',
        'test_prompt_with_arguments',
        'test_prompt_with_embedded_resource',
        'test_prompt_with_image',
        'test_input_required_result_prompt',
      ]),
    );
    for (const prompt of prompts) expect(prompt.description, prompt.name).toBeTruthy();
    expect((await client.getPrompt({ name: 'test_simple_prompt' })).messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } },
    ]);
    expect(
      (
        await client.getPrompt({
          name: 'test_prompt_with_arguments',
          arguments: { arg1: 'a', arg2: 'b' },
        })
      ).messages[0]?.content,
    ).toEqual({
      type: 'text',
      text: "Prompt with arguments: arg1='a', arg2='b'",
    });
    const embedded = await client.getPrompt({
      name: 'test_prompt_with_embedded_resource',
      arguments: { resourceUri: 'test://example-resource' },
    });
    expect(embedded.messages[0]?.content).toEqual({
      type: 'resource',
      resource: {
        uri: 'test://example-resource',
        mimeType: 'text/plain',
        text: 'Embedded resource content for testing.',
      },
    });
    const image = await client.getPrompt({ name: 'test_prompt_with_image' });
    expect(image.messages.map((m) => m.content.type)).toEqual(['image', 'text']);
    const { completion } = await client.complete({
      ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
      argument: { name: 'arg1', value: 'par' },
    });
    expect(completion.values).toEqual(['paris', 'park', 'party']);
    const template = await client.complete({
      ref: { type: 'ref/resource', uri: 'test://template/{id}/data' },
      argument: { name: 'id', value: '4' },
    });
    expect(template.completion.values).toEqual(['456']);
  });

  it('changes its tool list on request', async () => {
    // tools/list is cacheable for 60 s (2026-07-28 ttlMs): look past the client's cache.
    const listed = async (): Promise<boolean> =>
      (await client.listTools(undefined, { cacheMode: 'bypass' })).tools.some(
        (t) => t.name === 'test_dynamic_tool',
      );
    const had = await listed();
    await client.callTool({ name: 'test_trigger_tool_change', arguments: {} });
    expect(await listed()).toBe(!had);
    if (era === '2025-11-25') await expect.poll(() => seen.listChanged.length).toBeGreaterThan(0);
  });

  if (era === '2025-11-25') {
    it('answers ping and resource subscriptions (2025 era)', async () => {
      await expect(client.ping()).resolves.toEqual({});
      await expect(client.subscribeResource({ uri: 'test://watched-resource' })).resolves.toEqual(
        {},
      );
      await expect(client.unsubscribeResource({ uri: 'test://watched-resource' })).resolves.toEqual(
        {},
      );
    });
  }
});

describe.each(ERAS)('a client without the capabilities a fixture needs (%s)', (era) => {
  let client: Client;

  beforeAll(async () => {
    ({ client } = await connect(era, {}));
  });
  afterAll(async () => client.close());

  it('gets -32021 MissingRequiredClientCapability from test_missing_capability', async () => {
    await expect(
      client.callTool({ name: 'test_missing_capability', arguments: {} }),
    ).rejects.toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { sampling: {} } },
    });
  });

  it('is asked only for what it declared', async () => {
    expect(
      textOf(
        await client.callTool({ name: 'test_input_required_result_capabilities', arguments: {} }),
      ),
    ).toBe('No supported capabilities declared');
  });
});
