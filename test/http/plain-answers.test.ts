// The shaper of 2025-era POST answers, against a stand-in for the SDK transport: the first message
// for the POST decides (its response: JSON, the SSE body cancelled; anything else: the SSE stream);
// a client that takes no SSE always gets JSON; a closed session or a client that went away releases
// the POST with the transport's own answer.
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { SessionEventStore } from '../../src/http/event-store.js';
import { PlainAnswers } from '../../src/http/plain-answers.js';

function harness(): {
  answers: PlainAnswers;
  sent: JSONRPCMessage[];
  transport: Transport;
  sse: () => { response: Response; cancelled: () => boolean };
} {
  const sent: JSONRPCMessage[] = [];
  const inner: Transport = {
    start: async () => undefined,
    close: async () => undefined,
    send: async (message) => void sent.push(message),
  };
  const answers = new PlainAnswers(new SessionEventStore());
  const sse = (): { response: Response; cancelled: () => boolean } => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({ cancel: () => void (cancelled = true) });
    return {
      response: new Response(body, {
        headers: { 'content-type': 'text/event-stream', 'mcp-session-id': 's-1' },
      }),
      cancelled: () => cancelled,
    };
  };
  return { answers, sent, transport: answers.wrap(inner), sse };
}

const request = { jsonrpc: '2.0', id: 7, method: 'resources/read', params: { uri: 'file:///a' } };
const result: JSONRPCMessage = { jsonrpc: '2.0', id: 7, result: { contents: [] } };
const progress: JSONRPCMessage = {
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: { progressToken: 'p', progress: 1 },
};

describe('PlainAnswers', () => {
  it('answers JSON with the session id when the response comes first, cancelling the SSE body', async () => {
    const h = harness();
    const { response, cancelled } = h.sse();
    const answered = h.answers.answer(
      request,
      new AbortController().signal,
      false,
      async () => response,
    );
    await Promise.resolve();
    await h.transport.send(result);
    const answer = await answered;
    expect(answer.headers.get('content-type')).toBe('application/json');
    expect(answer.headers.get('mcp-session-id')).toBe('s-1');
    expect(await answer.json()).toEqual(result);
    expect(cancelled()).toBe(true);
    expect(h.sent).toEqual([result]);
  });

  it('answers with the SSE stream when a related message comes before the response', async () => {
    const h = harness();
    const { response } = h.sse();
    const answered = h.answers.answer(
      request,
      new AbortController().signal,
      false,
      async () => response,
    );
    await Promise.resolve();
    await h.transport.send(progress, { relatedRequestId: 7 });
    expect(await answered).toBe(response);
  });

  it('ignores messages for other requests and the GET stream while deciding', async () => {
    const h = harness();
    const { response } = h.sse();
    const answered = h.answers.answer(
      request,
      new AbortController().signal,
      false,
      async () => response,
    );
    await Promise.resolve();
    await h.transport.send(progress, { relatedRequestId: 8 });
    await h.transport.send({ jsonrpc: '2.0', method: 'notifications/resources/list_changed' });
    await h.transport.send(result);
    expect((await answered).headers.get('content-type')).toBe('application/json');
  });

  it('answers a client that takes no SSE with JSON even after a related message', async () => {
    const h = harness();
    const { response } = h.sse();
    const answered = h.answers.answer(
      request,
      new AbortController().signal,
      true,
      async () => response,
    );
    await Promise.resolve();
    await h.transport.send(progress, { relatedRequestId: 7 });
    await h.transport.send(result);
    expect(await (await answered).json()).toEqual(result);
  });

  it('releases a waiting POST with the transport answer when the session closes or the client goes away', async () => {
    const h = harness();
    const first = h.sse();
    const closing = h.answers.answer(
      request,
      new AbortController().signal,
      false,
      async () => first.response,
    );
    await Promise.resolve();
    h.answers.close();
    expect(await closing).toBe(first.response);

    const second = h.sse();
    const abort = new AbortController();
    const leaving = h.answers.answer(
      { ...request, id: 9 },
      abort.signal,
      false,
      async () => second.response,
    );
    await Promise.resolve();
    abort.abort();
    expect(await leaving).toBe(second.response);
  });

  it('passes through what the transport answers without a stream (an error, a 202)', async () => {
    const h = harness();
    const refused = new Response('{}', {
      status: 400,
      headers: { 'content-type': 'application/json' },
    });
    expect(
      await h.answers.answer(request, new AbortController().signal, false, async () => refused),
    ).toBe(refused);
    const accepted = new Response(null, { status: 202 });
    expect(
      await h.answers.answer(
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        new AbortController().signal,
        false,
        async () => accepted,
      ),
    ).toBe(accepted);
    // The id is free again: a later request with it is shaped as usual.
    const { response } = h.sse();
    const answered = h.answers.answer(
      request,
      new AbortController().signal,
      false,
      async () => response,
    );
    await Promise.resolve();
    await h.transport.send(result);
    expect((await answered).headers.get('content-type')).toBe('application/json');
  });
});
