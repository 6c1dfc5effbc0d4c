// A plain 2026-07-28 resources/read is answered on the endpoint's own path, without an SDK server
// per request (src/mcp/direct/stateless.ts). It must be indistinguishable from the SDK's answer: the same
// status, content type and JSON for a read, a missing resource and a path outside the root; and
// every request that is not exactly plain still reaches the SDK, which checks and answers it.
import type { IncomingMessage } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptance } from '../../src/http/accept.js';
import { directReadOf as directReadWith, sameJson } from '../../src/mcp/direct/stateless.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { Cleanup, connectHttp, MODERN_VERSION } from '../helpers/clients.js';
import { fileUri, makeTempDir, removeTree } from '../helpers/tree.js';
import { modernMeta, rawHttp, type RawHttpResponse } from '../helpers/wire.js';

const ACCEPT = 'application/json, text/event-stream';
// The endpoint hands the direct path its verdict on Accept (http/accept.ts).
const directReadOf = (req: IncomingMessage, body: unknown): ReturnType<typeof directReadWith> =>
  directReadWith(req, body, (header) => acceptance(header).json);
// A trace context in `_meta` is something the direct path does not take: the same read then goes
// through the SDK, which makes it the reference answer.
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

const cleanup = new Cleanup();
let root: string;
let url: string;

function headersFor(uri: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: ACCEPT,
    'mcp-protocol-version': MODERN_VERSION,
    'mcp-method': 'resources/read',
    'mcp-name': uri,
    ...extra,
  };
}

function read(
  uri: string,
  options: {
    viaSdk?: boolean;
    headers?: Record<string, string>;
    body?: Record<string, unknown>;
  } = {},
): Promise<RawHttpResponse> {
  const meta =
    options.viaSdk === true ? { ...modernMeta(), traceparent: TRACEPARENT } : modernMeta();
  const body = options.body ?? {
    jsonrpc: '2.0',
    id: 7,
    method: 'resources/read',
    params: { uri, _meta: meta },
  };
  return rawHttp(url, { headers: options.headers ?? headersFor(uri), body: JSON.stringify(body) });
}

function shape(response: RawHttpResponse): unknown {
  return {
    status: response.status,
    type: response.headers['content-type'],
    body: JSON.parse(response.body) as unknown,
  };
}

beforeAll(async () => {
  root = makeTempDir();
  cleanup.add(() => removeTree(root));
  writeFileSync(join(root, 'note.txt'), 'hello\n');
  writeFileSync(join(root, 'ünïcode.txt'), 'wide\n');
  const reservoir: Reservoir = createReservoir({ providers: [await filesProvider({ root })] });
  cleanup.add(() => reservoir.close());
  url = (await reservoir.listen({ port: 0 })).url;
});

afterAll(() => cleanup.run());

describe('2026-07-28 resources/read answered directly', () => {
  it('answers a read exactly as the SDK does: status, content type, result, cache hint and server identity', async () => {
    const uri = fileUri(root, 'note.txt');
    const [direct, sdk] = await Promise.all([read(uri), read(uri, { viaSdk: true })]);
    expect(shape(direct)).toEqual(shape(sdk));
    const result = (JSON.parse(direct.body) as { result: Record<string, unknown> }).result;
    expect(result['contents']).toEqual([{ uri, mimeType: 'text/plain', text: 'hello\n' }]);
    expect(result).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'public' });
    expect(Number(direct.headers['content-length'])).toBe(Buffer.byteLength(direct.body));
  });

  it('names the server by name, title and version in every result, and gives its icons in server/discover alone', async () => {
    const uri = fileUri(root, 'note.txt');
    const identityOf = (response: RawHttpResponse): unknown =>
      (JSON.parse(response.body) as { result: { _meta: Record<string, unknown> } }).result._meta[
        'io.modelcontextprotocol/serverInfo'
      ];
    const short = { name: 'reservoir', title: 'Reservoir', version: expect.any(String) as unknown };
    expect(identityOf(await read(uri))).toStrictEqual(short);
    expect(identityOf(await read(uri, { viaSdk: true }))).toStrictEqual(short);
    const ask = (method: string): Promise<RawHttpResponse> =>
      rawHttp(url, {
        headers: {
          'content-type': 'application/json',
          accept: ACCEPT,
          'mcp-protocol-version': MODERN_VERSION,
          'mcp-method': method,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 8, method, params: { _meta: modernMeta() } }),
      });
    expect(identityOf(await ask('tools/list'))).toStrictEqual(short);
    const discovered = identityOf(await ask('server/discover')) as {
      name: string;
      icons?: { src: string; theme: string }[];
    };
    expect(discovered.name).toBe('reservoir');
    expect(discovered.icons?.map((icon) => icon.theme)).toEqual(['light', 'dark']);
  });

  it("answers a missing resource and a path outside the root with the SDK's error, in band", async () => {
    for (const uri of [fileUri(root, 'missing.txt'), 'file:///etc/passwd']) {
      const [direct, sdk] = await Promise.all([read(uri), read(uri, { viaSdk: true })]);
      expect(shape(direct)).toEqual(shape(sdk));
      expect(JSON.parse(direct.body)).toMatchObject({
        id: 7,
        error: { code: -32602, data: { uri } },
      });
    }
  });

  it('leaves a header that disagrees with the body to the SDK, which rejects it', async () => {
    const uri = fileUri(root, 'note.txt');
    const wrongName = await read(uri, { headers: headersFor(fileUri(root, 'other.txt')) });
    expect(wrongName.status).toBe(400);
    expect(JSON.parse(wrongName.body)).toMatchObject({ error: { code: -32020 } });
    const noVersion = await read(uri, {
      headers: {
        'content-type': 'application/json',
        accept: ACCEPT,
        'mcp-method': 'resources/read',
        'mcp-name': uri,
      },
    });
    expect(noVersion.status).toBe(400);
  });

  it('serves the real SDK client (2026 era) its reads, including a URI the Mcp-Name header must encode', async () => {
    const { client } = await connectHttp('2026', url, cleanup);
    const uri = fileUri(root, 'ünïcode.txt');
    const result = await client.readResource({ uri }, { cacheMode: 'bypass' });
    expect(result.contents).toEqual([{ uri, mimeType: 'text/plain', text: 'wide\n' }]);
  });
});

describe('which requests take the direct path', () => {
  const uri = 'file:///srv/a.txt';
  const req = (headers: Record<string, string> = {}): IncomingMessage =>
    ({ headers: { ...headersFor(uri), ...headers } }) as unknown as IncomingMessage;
  const body = (
    params: Record<string, unknown> = {},
    extra: Record<string, unknown> = {},
  ): Record<string, unknown> => ({
    jsonrpc: '2.0',
    id: 3,
    method: 'resources/read',
    params: { uri, _meta: modernMeta(), ...params },
    ...extra,
  });

  it('takes a plain read whose headers match its body', () => {
    expect(directReadOf(req(), body())).toEqual({ id: 3, uri });
  });

  it('leaves everything else to the SDK', () => {
    const cases: Array<[string, IncomingMessage, unknown]> = [
      [
        'another method',
        req({ 'mcp-method': 'resources/list' }),
        body({}, { method: 'resources/list' }),
      ],
      ['a batch', req(), [body()]],
      ['an extra body member', req(), body({}, { extra: 1 })],
      ['an extra param', req(), body({ cursor: 'x' })],
      [
        'trace context in _meta',
        req(),
        body({ _meta: { ...modernMeta(), traceparent: TRACEPARENT } }),
      ],
      ['an Mcp-Name that differs', req({ 'mcp-name': 'file:///srv/b.txt' }), body()],
      [
        'no Mcp-Name',
        { headers: { ...headersFor(uri), 'mcp-name': undefined } } as unknown as IncomingMessage,
        body(),
      ],
      ['another protocol version header', req({ 'mcp-protocol-version': '2025-11-25' }), body()],
      [
        'an envelope naming another revision',
        req(),
        body({
          _meta: { ...modernMeta(), 'io.modelcontextprotocol/protocolVersion': '2025-11-25' },
        }),
      ],
      [
        'an invalid envelope',
        req(),
        body({ _meta: { ...modernMeta(), 'io.modelcontextprotocol/clientInfo': 'me' } }),
      ],
      ['a fractional id', req(), body({}, { id: 1.5 })],
      ['an Accept without JSON', req({ accept: 'text/event-stream' }), body()],
      ['a non-string uri', req(), body({ uri: 3 })],
    ];
    for (const [what, request, payload] of cases)
      expect(directReadOf(request, payload), what).toBeUndefined();
  });

  it('compares an envelope with the last accepted one as JSON values: same members in any order, nothing more or less', () => {
    const parse = (text: string): unknown => JSON.parse(text);
    const same: Array<[string, string]> = [
      ['{"a":1,"b":{"c":[1,"x",null]}}', '{"b":{"c":[1,"x",null]},"a":1}'],
      ['{}', '{}'],
      ['{"__proto__":{"x":1}}', '{"__proto__":{"x":1}}'],
    ];
    const different: Array<[string, string]> = [
      ['{"a":1}', '{"a":"1"}'],
      ['{"a":1}', '{"a":1,"b":2}'],
      ['{"a":1,"b":2}', '{"a":1}'],
      ['{"a":[]}', '{"a":{}}'],
      ['{"a":null}', '{"a":{}}'],
      ['{"a":[1,2]}', '{"a":[2,1]}'],
      ['{"a":{"b":1}}', '{"a":{"b":1,"c":1}}'],
      ['{"__proto__":{"x":1}}', '{"__proto__":{"x":2}}'],
      ['{"__proto__":{}}', '{}'],
    ];
    for (const [a, b] of same) expect(sameJson(parse(a), parse(b)), `${a} ${b}`).toBe(true);
    for (const [a, b] of different) {
      expect(sameJson(parse(a), parse(b)), `${a} ${b}`).toBe(false);
      expect(sameJson(parse(b), parse(a)), `${b} ${a}`).toBe(false);
    }
  });

  it('remembers only envelopes the SDK accepted: an invalid one is refused however often it follows valid ones', () => {
    const clientInfo = 'io.modelcontextprotocol/clientInfo';
    for (let i = 0; i < 3; i += 1) {
      expect(
        directReadOf(
          req(),
          body({ _meta: { ...modernMeta(), [clientInfo]: { name: `client-${i}`, version: '1' } } }),
        ),
      ).toEqual({ id: 3, uri });
      expect(
        directReadOf(
          req(),
          body({ _meta: { ...modernMeta(), [clientInfo]: { name: `client-${i}` } } }),
        ),
      ).toBeUndefined();
      expect(
        directReadOf(
          req(),
          body({ _meta: { ...modernMeta(), [clientInfo]: { name: `client-${i}`, version: 1 } } }),
        ),
      ).toBeUndefined();
    }
    // Past the bound, the oldest accepted envelopes are forgotten and asked about again: still accepted.
    for (let i = 0; i < 300; i += 1)
      directReadOf(
        req(),
        body({ _meta: { ...modernMeta(), [clientInfo]: { name: `many-${i}`, version: '1' } } }),
      );
    expect(
      directReadOf(
        req(),
        body({ _meta: { ...modernMeta(), [clientInfo]: { name: 'client-0', version: '1' } } }),
      ),
    ).toEqual({ id: 3, uri });
    expect(
      directReadOf(req(), body({ _meta: { ...modernMeta(), [clientInfo]: { name: 'client-0' } } })),
    ).toBeUndefined();
  });
});
