// Issue 11, item 4, the corner the socket tests cannot time: while every one of a principal's
// sessions is still being opened (its server instance not yet connected), there is nothing of its
// own to close, so one more `initialize` is refused with 429 naming the cap — and the one being
// opened completes. Driven on LegacySessions directly, with a factory held at a gate.
import type { AuthInfo, McpServerFactory } from '@modelcontextprotocol/server';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/log.js';
import { LegacySessions } from '../../src/http/legacy-sessions.js';
import { createReservoir } from '../../src/server/index.js';
import { initializeParams } from '../helpers/wire.js';

const reservoir = createReservoir();
afterAll(() => reservoir.close());

const alice: AuthInfo = {
  token: 't',
  clientId: 'alice',
  scopes: [],
  extra: { principal: { kind: 'token', id: 'alice', scopes: [] } },
};
const bob: AuthInfo = {
  token: 't',
  clientId: 'bob',
  scopes: [],
  extra: { principal: { kind: 'token', id: 'bob', scopes: [] } },
};

function initialize(id: number): { request: Request; body: unknown } {
  const body = { jsonrpc: '2.0', id, method: 'initialize', params: initializeParams() };
  const request = new Request('http://127.0.0.1/mcp', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(body),
  });
  return { request, body };
}

describe('a principal whose sessions are all still opening', () => {
  it('is refused one more with 429 and kind sessions_per_principal, while the opening one and another principal succeed', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let waiting = 0;
    const factory: McpServerFactory = async (ctx) => {
      waiting += 1;
      await gate;
      return reservoir.factory(ctx);
    };
    const sessions = new LegacySessions({
      factory,
      logger: silentLogger,
      maxBodyBytes: 1 << 20,
      limits: { perPrincipal: 1 },
    });
    try {
      const first = initialize(1);
      const opening = sessions.handle(first.request, first.body, alice, '127.0.0.1');
      while (waiting < 1) await new Promise((resolve) => setImmediate(resolve));
      const second = initialize(2);
      const refused = await sessions.handle(second.request, second.body, alice, '127.0.0.1');
      expect(refused.status).toBe(429);
      expect(await refused.json()).toEqual({
        jsonrpc: '2.0',
        id: 2,
        error: {
          code: -32013,
          message:
            'Too many sessions: at most 1 per principal, and each is in use (a GET stream open, or still opening); end one with DELETE, or retry later',
          data: { code: 'limit_exceeded', kind: 'sessions_per_principal', limit: 1, active: 1 },
        },
      });
      // Another principal is not held up by alice's opening session.
      const other = initialize(3);
      const bobs = sessions.handle(other.request, other.body, bob, '127.0.0.1');
      open();
      expect((await opening).status).toBe(200);
      expect((await bobs).status).toBe(200);
      expect(sessions.heldBy('token:alice')).toBe(1);
      expect(sessions.heldBy('token:bob')).toBe(1);
    } finally {
      open();
      await sessions.close();
    }
  });
});
