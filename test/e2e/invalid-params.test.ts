// Pins what a caller sees for a request whose params lack a field the method needs, or give it the
// wrong type: -32602 (invalid params) with a message and `data.argument` naming the field — never
// -32603 with the validator's raw issue list. Over raw stdio lines and raw HTTP requests, in both
// eras, for resources/read, subscribe, unsubscribe and the siblings that had the same defect.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import {
  Cleanup,
  ERAS,
  MODERN_VERSION,
  spawnHttpServer,
  type Era,
  type HttpServerProcess,
} from '../helpers/clients.js';
import { fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import {
  eraParams,
  LegacyHttpSession,
  modernHttpRequest,
  rawHttp,
  RawStdio,
  type JsonRpcResponse,
} from '../helpers/wire.js';

const ACCEPT = 'application/json, text/event-stream';
const cleanup = new Cleanup();
let root: string;
let http: HttpServerProcess;

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir();
  cleanup.add(() => removeTree(root));
  writeTree(root, { 'a.txt': 'hello\n' });
  http = await spawnHttpServer([root], [], cleanup);
});

afterAll(() => cleanup.run());

interface Case {
  method: string;
  params: Record<string, unknown>;
  /** The field the error must name. */
  field: string;
  /** Words the message must contain. */
  says: RegExp;
  /** Methods that exist only in the 2025 era. */
  legacyOnly?: boolean;
}

const CASES: Case[] = [
  { method: 'resources/read', params: {}, field: 'uri', says: /required by resources\/read/ },
  {
    method: 'resources/read',
    params: { uri: 42 },
    field: 'uri',
    says: /expected a string .* got number/,
  },
  {
    method: 'resources/read',
    params: { uri: null },
    field: 'uri',
    says: /expected a string .* got null/,
  },
  { method: 'resources/read', params: { uri: ['file:///x'] }, field: 'uri', says: /got an array/ },
  {
    method: 'resources/subscribe',
    params: {},
    field: 'uri',
    says: /required by resources\/subscribe/,
    legacyOnly: true,
  },
  {
    method: 'resources/subscribe',
    params: { uri: {} },
    field: 'uri',
    says: /got an object/,
    legacyOnly: true,
  },
  {
    method: 'resources/unsubscribe',
    params: {},
    field: 'uri',
    says: /required by resources\/unsubscribe/,
    legacyOnly: true,
  },
  {
    method: 'resources/unsubscribe',
    params: { uri: 7 },
    field: 'uri',
    says: /got number/,
    legacyOnly: true,
  },
  { method: 'resources/list', params: { cursor: 5 }, field: 'cursor', says: /expected a string/ },
  {
    method: 'resources/templates/list',
    params: { cursor: false },
    field: 'cursor',
    says: /got boolean/,
  },
  { method: 'prompts/list', params: { cursor: {} }, field: 'cursor', says: /got an object/ },
  { method: 'tools/list', params: { cursor: 1 }, field: 'cursor', says: /got number/ },
  { method: 'prompts/get', params: {}, field: 'name', says: /required by prompts\/get/ },
  {
    method: 'prompts/get',
    params: { name: 'x', arguments: 'a=b' },
    field: 'arguments',
    says: /expected an object/,
  },
  { method: 'tools/call', params: {}, field: 'name', says: /required by tools\/call/ },
  { method: 'tools/call', params: { name: 3 }, field: 'name', says: /got number/ },
  {
    method: 'completion/complete',
    params: {},
    field: 'ref',
    says: /required by completion\/complete/,
  },
  {
    method: 'completion/complete',
    params: { ref: { type: 'ref/prompt', name: 'x' } },
    field: 'argument',
    says: /required by completion\/complete/,
  },
  // Well-typed fields the protocol's schema still refuses: -32602 with its first issue in words.
  {
    method: 'completion/complete',
    params: { ref: { type: 'ref/nothing' }, argument: { name: 'x', value: '' } },
    field: 'params',
    says: /completion\/complete parameters do not match the protocol's schema: ref/,
  },
];

function casesFor(era: Era): Case[] {
  return CASES.filter((c) => era === '2025' || c.legacyOnly !== true);
}

function label(c: Case): string {
  return `${c.method} ${JSON.stringify(c.params)}`;
}

function expectNamesField(response: JsonRpcResponse | undefined, c: Case): void {
  expect(response?.result, label(c)).toBeUndefined();
  expect(response?.error?.code, label(c)).toBe(-32602);
  const message = String(response?.error?.message);
  expect(message, label(c)).toContain(`'${c.field}'`);
  expect(message, label(c)).toMatch(c.says);
  expect(message, label(c)).not.toMatch(/invalid_type|"path"|\[\s*\{/);
  expect(response?.error?.data, label(c)).toMatchObject({
    code: 'invalid_argument',
    argument: c.field,
  });
}

describe.each(ERAS)('over raw stdio in the %s era', (era) => {
  let wire: RawStdio;

  beforeAll(async () => {
    wire = RawStdio.serve([root]);
    cleanup.add(() => wire.kill());
    if (era === '2025') await wire.initialize();
  });

  it('answers every request missing or mistyping a field it needs with -32602 naming the field', async () => {
    for (const c of casesFor(era))
      expectNamesField(await wire.request(c.method, eraParams(era, c.params)), c);
  });

  it('keeps the connection serving: a well-formed read still succeeds afterwards', async () => {
    const response = await wire.request(
      'resources/read',
      eraParams(era, { uri: fileUri(root, 'a.txt') }),
    );
    expect(response.result?.['contents']).toEqual([expect.objectContaining({ text: 'hello\n' })]);
  });
});

describe('over raw HTTP in the 2025 era', () => {
  it('answers every request missing or mistyping a field it needs with -32602 naming the field', async () => {
    const session = await LegacyHttpSession.open(http.url);
    try {
      for (const c of casesFor('2025'))
        expectNamesField(await session.request(c.method, c.params), c);
      const ok = await session.request('resources/read', { uri: fileUri(root, 'a.txt') });
      expect(ok.result?.['contents']).toEqual([expect.objectContaining({ text: 'hello\n' })]);
    } finally {
      await session.close();
    }
  });
});

describe('over raw HTTP in the 2026-07-28 era', () => {
  it('answers every request missing or mistyping a field it needs with -32602 naming the field', async () => {
    let id = 1;
    for (const c of casesFor('2026')) {
      // A string name goes in the Mcp-Name header too, as the 2026-07-28 HTTP transport requires.
      const name = c.params['name'];
      const response =
        typeof name === 'string'
          ? await rawHttp(http.url, {
              headers: {
                'content-type': 'application/json',
                accept: ACCEPT,
                'mcp-protocol-version': MODERN_VERSION,
                'mcp-method': c.method,
                'mcp-name': name,
              },
              body: JSON.stringify({
                jsonrpc: '2.0',
                id: id++,
                method: c.method,
                params: eraParams('2026', c.params),
              }),
            })
          : await modernHttpRequest(http.url, id++, c.method, c.params);
      expectNamesField(response.messages[0], c);
    }
  });
});
