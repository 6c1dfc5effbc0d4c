// Every HTTP client reads everything it may read. Python's `mcp` 2.x and FastMCP refuse any SSE event
// over 1 MiB; a 2025-era POST used to be answered as SSE always, so a file between ~0.75 MiB and the
// read cap was unreadable for them. A request that needs no stream is now answered as plain JSON (in
// both eras), SSE stays where the server has something to send before the answer (progress, log
// messages, a server request), and `Accept` is read as HTTP defines it.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import {
  Client as SdkClient,
  StreamableHTTPClientTransport,
  type Client,
} from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inputRequired } from '../../src/core/input.js';
import { defineTool } from '../../src/core/tools.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir } from '../../src/server/index.js';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup, connectHttp, ERAS, spawnHttpServer, type Era } from '../helpers/clients.js';
import { fileUri, makeTempDir, removeTree, sha256 } from '../helpers/tree.js';
import {
  eraParams,
  initializeParams,
  modernMeta,
  rawHttp,
  type JsonRpcResponse,
  type RawHttpResponse,
} from '../helpers/wire.js';

const SSE_EVENT_LIMIT = 1_048_576;
const BLOB_BYTES = 5 * 1024 * 1024;
const BOTH = 'application/json, text/event-stream';

const cleanup = new Cleanup();
let root: string;
let blob: Buffer;
let url: string;

/**
 * Reads one HTTP answer as Python's `mcp` client does: a JSON body is parsed whole; an SSE body is
 * split into events, and any event over 1 MiB fails the request with Python's message.
 */
function strictMessages(response: RawHttpResponse): JsonRpcResponse[] {
  const type = String(response.headers['content-type'] ?? '');
  if (type.startsWith('application/json'))
    return [JSON.parse(response.body) as JsonRpcResponse].flat();
  if (!type.startsWith('text/event-stream'))
    throw new Error(
      `unexpected content type ${type}: ${response.status} ${response.body.slice(0, 200)}`,
    );
  const messages: JsonRpcResponse[] = [];
  for (const event of response.body.split('\n\n')) {
    if (Buffer.byteLength(event) > SSE_EVENT_LIMIT)
      throw new Error(`Server-sent event exceeded the ${SSE_EVENT_LIMIT} byte limit`);
    const data = event
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trimStart())
      .join('\n');
    if (data.trim() !== '') messages.push(JSON.parse(data) as JsonRpcResponse);
  }
  return messages;
}

/** A hand-made 2025 session opened with `accept` on every request. */
async function openSession(
  accept: string = BOTH,
): Promise<{ headers: Record<string, string>; init: RawHttpResponse }> {
  const init = await rawHttp(url, {
    headers: { 'content-type': 'application/json', accept },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: initializeParams(),
    }),
  });
  const id = init.headers['mcp-session-id'];
  if (init.status !== 200 || typeof id !== 'string')
    throw new Error(`initialize failed: ${init.status} ${init.body}`);
  const headers = {
    'content-type': 'application/json',
    accept,
    'mcp-session-id': id,
    'mcp-protocol-version': '2025-11-25',
  };
  await rawHttp(url, {
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  cleanup.add(() => rawHttp(url, { method: 'DELETE', headers }));
  return { headers, init };
}

/** POSTs `method` in `era` (a 2025 request inside a fresh session) and returns the raw answer. */
async function post(
  era: Era,
  method: string,
  params: Record<string, unknown>,
  accept: string = BOTH,
): Promise<RawHttpResponse> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: eraParams(era, params) });
  if (era === '2026') {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
    };
    if (typeof params['uri'] === 'string') headers['mcp-name'] = params['uri'];
    return rawHttp(url, { headers, body, timeoutMs: 30_000 });
  }
  const { headers } = await openSession(accept);
  return rawHttp(url, { headers, body, timeoutMs: 30_000 });
}

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir();
  cleanup.add(() => removeTree(root));
  blob = randomBytes(BLOB_BYTES);
  writeFileSync(join(root, 'five.bin'), blob);
  writeFileSync(join(root, 'note.txt'), 'hello\n');
  ({ url } = await spawnHttpServer([root], [], cleanup));
}, 30_000);

afterAll(() => cleanup.run());

describe.each(ERAS)('`reservoir serve --http`, %s era', (era) => {
  it('answers a 5 MiB blob read as plain JSON that a client refusing SSE events over 1 MiB reads whole', async () => {
    const uri = fileUri(root, 'five.bin');
    const response = await post(era, 'resources/read', { uri });
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    const [message] = strictMessages(response);
    const content = (message?.result?.['contents'] as { uri: string; blob?: string }[])[0]!;
    expect(content.uri).toBe(uri);
    expect(sha256(Buffer.from(content.blob ?? '', 'base64'))).toBe(sha256(blob));
  });

  it('answers the same read carrying a progress token as plain JSON too, since a read reports no progress', async () => {
    const uri = fileUri(root, 'five.bin');
    const params = {
      uri,
      _meta: { ...(era === '2026' ? modernMeta() : {}), progressToken: 'read-1' },
    };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'resources/read', params });
    const headers =
      era === '2026'
        ? {
            'content-type': 'application/json',
            accept: BOTH,
            'mcp-protocol-version': '2026-07-28',
            'mcp-method': 'resources/read',
            'mcp-name': uri,
          }
        : (await openSession()).headers;
    const response = await rawHttp(url, { headers, body, timeoutMs: 30_000 });
    const messages = strictMessages(response);
    expect(messages.map((m) => m.id)).toEqual([8]);
    expect(
      sha256(
        Buffer.from((messages[0]!.result!['contents'] as { blob: string }[])[0]!.blob, 'base64'),
      ),
    ).toBe(sha256(blob));
  });

  it('serves the 5 MiB blob to the real SDK client over HTTP', async () => {
    const { client } = await connectHttp(era, url, cleanup);
    const { contents } = await client.readResource({ uri: fileUri(root, 'five.bin') });
    expect(sha256(Buffer.from((contents[0] as { blob: string }).blob, 'base64'))).toBe(
      sha256(blob),
    );
  });

  it.each([
    '*/*',
    'application/*, text/*',
    'application/json;q=0.9, text/event-stream;q=0.5',
    '*/*;q=0.1',
    'APPLICATION/JSON , TEXT/EVENT-STREAM',
  ])('accepts `Accept: %s` as allowing both JSON and SSE', async (accept) => {
    const response = await post(era, 'resources/read', { uri: fileUri(root, 'note.txt') }, accept);
    expect(response.status).toBe(200);
    expect(strictMessages(response)[0]?.result?.['contents']).toEqual([
      expect.objectContaining({ text: 'hello\n' }),
    ]);
  });
});

describe('2025-era Accept headers', () => {
  it('opens a session for a client sending `Accept: */*` and answers its initialize as JSON with the session id', async () => {
    const { init } = await openSession('*/*');
    expect(init.headers['content-type']).toMatch(/^application\/json/);
    expect(init.messages[0]?.result?.['protocolVersion']).toBe('2025-11-25');
  });

  it('treats a request without Accept as accepting anything', async () => {
    const { headers } = await openSession(BOTH);
    const { accept: _omitted, ...without } = headers;
    const response = await rawHttp(url, {
      headers: without,
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' }),
    });
    expect(response.status).toBe(200);
    expect(response.messages).toEqual([{ jsonrpc: '2.0', id: 3, result: {} }]);
  });

  it('refuses a POST whose Accept rules JSON out with 406 naming the header and the type it must allow', async () => {
    const { headers } = await openSession(BOTH);
    for (const accept of ['text/event-stream', 'text/html', 'application/json;q=0, */*']) {
      const response = await rawHttp(url, {
        headers: { ...headers, accept },
        body: JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'ping' }),
      });
      expect(response.status).toBe(406);
      expect(response.messages[0]?.error).toEqual({
        code: -32000,
        message: `Not Acceptable: the Accept header (${accept}) must allow application/json`,
      });
    }
  });

  it('refuses a GET stream whose Accept rules SSE out with 406 naming text/event-stream', async () => {
    const { headers } = await openSession(BOTH);
    const response = await rawHttp(url, {
      method: 'GET',
      headers: { ...headers, accept: 'application/json' },
    });
    expect(response.status).toBe(406);
    expect(response.messages[0]?.error?.message).toBe(
      'Not Acceptable: the Accept header (application/json) must allow text/event-stream',
    );
  });
});

describe('JSON-RPC batches in 2025-era HTTP sessions', () => {
  async function sessionAt(revision: string): Promise<Record<string, string>> {
    const init = await rawHttp(url, {
      headers: { 'content-type': 'application/json', accept: BOTH },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { ...initializeParams(), protocolVersion: revision },
      }),
    });
    expect(init.messages[0]?.result?.['protocolVersion']).toBe(revision);
    const headers = {
      'content-type': 'application/json',
      accept: BOTH,
      'mcp-session-id': String(init.headers['mcp-session-id']),
      'mcp-protocol-version': revision,
    };
    await rawHttp(url, {
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    cleanup.add(() => rawHttp(url, { method: 'DELETE', headers }));
    return headers;
  }
  const batch = JSON.stringify([
    { jsonrpc: '2.0', id: 2, method: 'ping' },
    { jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri: 'will-be-replaced' } },
  ]);

  it('answers a batch in a session at 2025-03-26 as one JSON array, every request under its own id, in order', async () => {
    const headers = await sessionAt('2025-03-26');
    const response = await rawHttp(url, {
      headers,
      body: batch.replace('will-be-replaced', fileUri(root, 'note.txt')),
    });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(Array.isArray(JSON.parse(response.body))).toBe(true);
    expect(response.messages.map((m) => m.id)).toEqual([2, 3]);
    expect(response.messages[1]?.result?.['contents']).toEqual([
      expect.objectContaining({ text: 'hello\n' }),
    ]);
  });

  it.each(['2025-06-18', '2025-11-25'])(
    'refuses a batch in a session at %s with 400 and -32600 naming the revision, as stdio does',
    async (revision) => {
      const headers = await sessionAt(revision);
      const response = await rawHttp(url, { headers, body: batch });
      expect(response.status).toBe(400);
      expect(response.messages[0]).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message: `Invalid Request: JSON-RPC batches are allowed only at protocol revision 2025-03-26; this session uses ${revision}; send one message per request`,
        },
      });
    },
  );
});

describe('a stream where the server has something to send before the answer (library, in process)', () => {
  let endpointUrl: string;

  beforeAll(async () => {
    const steps = defineTool({
      name: 'steps',
      description: 'Reports three steps of progress, then returns a large text',
      input: z.object({}),
      async call(_args, ctx) {
        for (const step of [1, 2, 3]) await ctx.progress(step, 3);
        return { content: [{ type: 'text', text: 'x'.repeat(2048) }] };
      },
    });
    const reservoir = createReservoir({
      providers: [await filesProvider({ root })],
      tools: [steps],
    });
    const endpoint = await reservoir.listen({ port: 0 });
    cleanup.add(() => reservoir.close());
    endpointUrl = endpoint.url;
  });

  it.each(ERAS)(
    'streams progress before the result as SSE in the %s era, and answers the same call without a token as JSON',
    async (era) => {
      const { client } = await connectHttp(era, endpointUrl, cleanup);
      const seen: number[] = [];
      const result = await callWithProgress(client, (progress) => seen.push(progress));
      expect(seen).toEqual([1, 2, 3]);
      expect(result.content).toEqual([{ type: 'text', text: 'x'.repeat(2048) }]);

      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: eraParams(era, { name: 'steps', arguments: {} }),
      });
      const plain =
        era === '2026'
          ? await rawHttp(endpointUrl, {
              headers: {
                'content-type': 'application/json',
                accept: BOTH,
                'mcp-protocol-version': '2026-07-28',
                'mcp-method': 'tools/call',
                'mcp-name': 'steps',
              },
              body,
            })
          : await rawHttp(endpointUrl, {
              headers: (await openSessionAt(endpointUrl)).headers,
              body,
            });
      expect(plain.headers['content-type']).toMatch(/^application\/json/);
      const withToken = JSON.stringify({
        jsonrpc: '2.0',
        id: 10,
        method: 'tools/call',
        params: {
          name: 'steps',
          arguments: {},
          _meta: { ...(era === '2026' ? modernMeta() : {}), progressToken: 'p' },
        },
      });
      const streamed =
        era === '2026'
          ? await rawHttp(endpointUrl, {
              headers: {
                'content-type': 'application/json',
                accept: BOTH,
                'mcp-protocol-version': '2026-07-28',
                'mcp-method': 'tools/call',
                'mcp-name': 'steps',
              },
              body: withToken,
            })
          : await rawHttp(endpointUrl, {
              headers: (await openSessionAt(endpointUrl)).headers,
              body: withToken,
            });
      expect(streamed.headers['content-type']).toMatch(/^text\/event-stream/);
      expect(
        streamed.messages.map((m) => ('method' in m ? (m as { method: string }).method : m.id)),
      ).toEqual(['notifications/progress', 'notifications/progress', 'notifications/progress', 10]);
    },
  );
});

describe('a 2025-era client that accepts JSON only (library, in process)', () => {
  it('gets a call that reports progress answered as JSON, the progress dropped rather than streamed', async () => {
    const steps = defineTool({
      name: 'steps',
      description: 'Reports three steps of progress',
      input: z.object({}),
      async call(_args, ctx) {
        for (const step of [1, 2, 3]) await ctx.progress(step, 3);
        return { content: [{ type: 'text', text: 'done' }] };
      },
    });
    const reservoir = createReservoir({
      providers: [await filesProvider({ root })],
      tools: [steps],
    });
    cleanup.add(() => reservoir.close());
    const at = (await reservoir.listen({ port: 0 })).url;
    const saved = url;
    url = at;
    try {
      const { headers } = await openSession('application/json');
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 11,
        method: 'tools/call',
        params: { name: 'steps', arguments: {}, _meta: { progressToken: 'p' } },
      });
      const response = await rawHttp(at, { headers, body });
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.messages).toEqual([
        { jsonrpc: '2.0', id: 11, result: { content: [{ type: 'text', text: 'done' }] } },
      ]);
    } finally {
      url = saved;
    }
  });
});

describe('a server request in the middle of a 2025-era call (library, in process)', () => {
  it('keeps the SSE stream for a tool that elicits input over HTTP, and completes with the answer', async () => {
    const greet = defineTool({
      name: 'greet',
      description: 'Asks the user for a name, then greets them',
      input: z.object({}),
      async call(_args, ctx) {
        const answer = ctx.accepted<{ name: string }>('name');
        if (answer === undefined) {
          return inputRequired({
            inputRequests: {
              name: inputRequired.elicit('Your name?', {
                type: 'object',
                properties: { name: { type: 'string' } },
                required: ['name'],
              }),
            },
          });
        }
        return { content: [{ type: 'text', text: `Hello, ${answer.name}!` }] };
      },
    });
    const reservoir = createReservoir({
      providers: [await filesProvider({ root })],
      tools: [greet],
    });
    cleanup.add(() => reservoir.close());
    const at = (await reservoir.listen({ port: 0 })).url;
    const client = new SdkClient(
      { name: 'elicit-test', version: '1' },
      { capabilities: { elicitation: { form: {} } } },
    );
    const asked: string[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push((request.params as { message: string }).message);
      return { action: 'accept', content: { name: 'Ann' } };
    });
    // Records the content type of each tools/call answer the client receives.
    const seenTypes: string[] = [];
    const transport = new StreamableHTTPClientTransport(new URL(at), {
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (
          init?.method === 'POST' &&
          typeof init.body === 'string' &&
          init.body.includes('"tools/call"')
        )
          seenTypes.push(response.headers.get('content-type') ?? '');
        return response;
      },
    });
    cleanup.add(() => client.close());
    await client.connect(transport);
    const result = await client.callTool({ name: 'greet', arguments: {} });
    expect(asked).toEqual(['Your name?']);
    expect(result.content).toEqual([{ type: 'text', text: 'Hello, Ann!' }]);
    expect(seenTypes).toEqual([expect.stringMatching(/^text\/event-stream/)]);
  });
});

describe('a batch where one member reports progress (library, in process, 2025-03-26)', () => {
  it('answers the batch as SSE, progress first, every answer under its id', async () => {
    const steps = defineTool({
      name: 'steps',
      description: 'Reports three steps of progress',
      input: z.object({}),
      async call(_args, ctx) {
        for (const step of [1, 2, 3]) await ctx.progress(step, 3);
        return { content: [{ type: 'text', text: 'done' }] };
      },
    });
    const reservoir = createReservoir({
      providers: [await filesProvider({ root })],
      tools: [steps],
    });
    cleanup.add(() => reservoir.close());
    const at = (await reservoir.listen({ port: 0 })).url;
    const init = await rawHttp(at, {
      headers: { 'content-type': 'application/json', accept: BOTH },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { ...initializeParams(), protocolVersion: '2025-03-26' },
      }),
    });
    const headers = {
      'content-type': 'application/json',
      accept: BOTH,
      'mcp-session-id': String(init.headers['mcp-session-id']),
      'mcp-protocol-version': '2025-03-26',
    };
    await rawHttp(at, {
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    const response = await rawHttp(at, {
      headers,
      body: JSON.stringify([
        {
          jsonrpc: '2.0',
          id: 'call',
          method: 'tools/call',
          params: { name: 'steps', arguments: {}, _meta: { progressToken: 't' } },
        },
        { jsonrpc: '2.0', id: 'ping', method: 'ping' },
      ]),
    });
    expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
    const progress = response.messages.filter(
      (m) => (m as { method?: string }).method === 'notifications/progress',
    );
    expect(progress).toHaveLength(3);
    expect(
      response.messages
        .filter((m) => m.id !== undefined)
        .map((m) => m.id)
        .sort(),
    ).toEqual(['call', 'ping']);
  });
});

async function callWithProgress(
  client: Client,
  onProgress: (progress: number) => void,
): Promise<{ content: unknown }> {
  return client.callTool(
    { name: 'steps', arguments: {} },
    { onprogress: ({ progress }) => onProgress(progress) },
  ) as Promise<{ content: unknown }>;
}

async function openSessionAt(at: string): Promise<{ headers: Record<string, string> }> {
  const saved = url;
  url = at;
  try {
    return await openSession();
  } finally {
    url = saved;
  }
}
