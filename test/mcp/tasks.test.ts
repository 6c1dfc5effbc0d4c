// tasks/* on `reservoir serve`, which does not declare the tasks extension (SEP-2663): on the
// 2026-07-28 wire, tasks/get, tasks/update and tasks/cancel from a client that did not negotiate
// the extension are refused with MissingRequiredClientCapability (-32021, HTTP 400, naming the
// extension in data.requiredCapabilities); from one that did, the task is unknown (-32602). On a
// 2025-era connection, where tasks are behind the server's undeclared `tasks` capability, they are
// method not found (-32601). Raw wire over the built CLI's stdio and a real HTTP socket.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup, MODERN_VERSION, spawnHttpServer } from '../helpers/clients.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { modernMeta, rawHttp, RawStdio } from '../helpers/wire.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const REQUESTS = [
  { method: 'tasks/get', params: { taskId: 'gate-test' } },
  { method: 'tasks/update', params: { taskId: 'gate-test', inputResponses: {} } },
  { method: 'tasks/cancel', params: { taskId: 'gate-test' } },
] as const;

const cleanup = new Cleanup();
let root: string;

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir();
  cleanup.add(() => removeTree(root));
  writeTree(root, { 'a.md': '# A\n' });
});

afterAll(() => cleanup.run());

function declaringMeta(): Record<string, unknown> {
  return {
    ...modernMeta(),
    'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } },
  };
}

describe('tasks/* over stdio', () => {
  it('2026-07-28, extension not negotiated: -32021 naming the extension', async () => {
    const raw = RawStdio.serve([root]);
    cleanup.add(async () => void (await raw.end()));
    for (const { method, params } of REQUESTS) {
      const response = await raw.request(method, { ...params, _meta: modernMeta() });
      expect(response.error?.code, method).toBe(-32021);
      expect(response.error?.data, method).toEqual({
        requiredCapabilities: { extensions: { [TASKS]: {} } },
      });
    }
  });

  it('2026-07-28, extension negotiated: the task is unknown (-32602)', async () => {
    const raw = RawStdio.serve([root]);
    cleanup.add(async () => void (await raw.end()));
    for (const { method, params } of REQUESTS) {
      const response = await raw.request(method, { ...params, _meta: declaringMeta() });
      expect(response.error?.code, method).toBe(-32602);
      expect(response.error?.message, method).toContain("Unknown task 'gate-test'");
    }
  });

  it('2025-11-25: method not found (-32601)', async () => {
    const raw = RawStdio.serve([root]);
    cleanup.add(async () => void (await raw.end()));
    await raw.initialize();
    for (const { method, params } of REQUESTS) {
      const response = await raw.request(method, params);
      expect(response.error?.code, method).toBe(-32601);
    }
  });
});

describe('tasks/* over HTTP (2026-07-28)', () => {
  it('answers -32021 with status 400 when the extension is not negotiated', async () => {
    const server = await spawnHttpServer([root], [], cleanup);
    for (const [index, { method, params }] of REQUESTS.entries()) {
      const response = await rawHttp(server.url, {
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': MODERN_VERSION,
          'mcp-method': method,
          'mcp-name': params.taskId,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: index + 1,
          method,
          params: { ...params, _meta: modernMeta() },
        }),
      });
      expect(response.status, method).toBe(400);
      expect(response.messages[0]?.error?.code, method).toBe(-32021);
      expect(response.messages[0]?.error?.data, method).toEqual({
        requiredCapabilities: { extensions: { [TASKS]: {} } },
      });
    }
  });
});
