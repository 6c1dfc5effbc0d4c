// OpenTelemetry through @opentelemetry/api: with a tracer provider and a W3C propagator registered
// (what an SDK does), each MCP operation is one span continuing the caller's traceparent, and each
// provider call one span, all naming the instance.
import { afterEach, describe, expect, it } from 'vitest';
import * as api from '@opentelemetry/api';
import { createTracer } from '../../src/cluster/index.js';
import { createReservoir } from '../../src/server/index.js';
import { Cleanup, connectHttp } from '../helpers/clients.js';
import { modernMeta } from '../helpers/wire.js';
import { Backend, MEM_ROOT, memProvider, REDIS_URL, startMember, uniquePrefix } from './harness.js';

interface Recorded {
  name: string;
  attributes: api.Attributes;
  traceId: string;
  parentSpanId: string | undefined;
}

/** A minimal tracer provider recording spans, standing in for an OpenTelemetry SDK. */
class RecordingProvider implements api.TracerProvider {
  readonly spans: Recorded[] = [];
  getTracer(): api.Tracer {
    const spans = this.spans;
    const start = (
      name: string,
      options: api.SpanOptions = {},
      ctx: api.Context = api.context.active(),
    ): api.Span => {
      const parent = api.trace.getSpanContext(ctx);
      const spanContext: api.SpanContext = {
        traceId: parent?.traceId ?? 'a'.repeat(32),
        spanId: Math.random().toString(16).slice(2, 18).padEnd(16, '0'),
        traceFlags: 1,
      };
      const entry: Recorded = {
        name,
        attributes: { ...options.attributes },
        traceId: spanContext.traceId,
        parentSpanId: parent?.spanId,
      };
      const span = api.trace.wrapSpanContext(spanContext);
      return Object.assign(Object.create(span) as api.Span, {
        end: () => void spans.push(entry),
        setStatus: () => span,
        recordException: () => undefined,
        spanContext: () => spanContext,
      });
    };
    return {
      startSpan: start,
      startActiveSpan: (() => {
        throw new Error('unused');
      }) as api.Tracer['startActiveSpan'],
    };
  }
}

/** The W3C trace-context propagator (extract only). */
const w3c: api.TextMapPropagator = {
  inject: () => undefined,
  fields: () => ['traceparent', 'tracestate'],
  extract(ctx, carrier, getter) {
    const header = getter.get(carrier, 'traceparent');
    const match =
      typeof header === 'string'
        ? /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(header)
        : null;
    if (match === null) return ctx;
    return api.trace.setSpanContext(ctx, {
      traceId: match[1]!,
      spanId: match[2]!,
      traceFlags: Number.parseInt(match[3]!, 16),
      isRemote: true,
    });
  },
};

const cleanup = new Cleanup();
afterEach(async () => {
  await cleanup.run();
  api.trace.disable();
  api.propagation.disable();
});

describe.skipIf(REDIS_URL === undefined)('tracing in cluster mode', () => {
  it('records one span per MCP operation continuing the traceparent from _meta, and one per provider call, with the instance id', async () => {
    const provider = new RecordingProvider();
    api.trace.setGlobalTracerProvider(provider);
    api.propagation.setGlobalPropagator(w3c);
    const backend = new Backend();
    backend.values.set('row', 'v1');
    const member = await startMember('A', uniquePrefix(), backend);
    cleanup.add(() => member.close());
    const connection = await connectHttp('2026', member.url, cleanup);
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parent = '00f067aa0ba902b7';
    await connection.client.request({
      method: 'resources/read',
      params: { uri: `${MEM_ROOT}row`, _meta: { traceparent: `00-${traceId}-${parent}-01` } },
    });
    const operation = provider.spans.find((s) => s.name === 'mcp resources/read');
    expect(operation).toMatchObject({
      traceId,
      parentSpanId: parent,
      attributes: {
        'reservoir.instance': 'A',
        'mcp.method': 'resources/read',
        'mcp.target': `${MEM_ROOT}row`,
      },
    });
    const call = provider.spans.find((s) => s.name === 'provider read');
    expect(call).toMatchObject({
      attributes: {
        'reservoir.instance': 'A',
        'reservoir.source': MEM_ROOT,
        'mcp.uri': `${MEM_ROOT}row`,
      },
    });
  });
});

describe('tracing without cluster mode', () => {
  it('continues the traceparent HTTP header of a request when the embedder passes a tracer', async () => {
    const provider = new RecordingProvider();
    api.trace.setGlobalTracerProvider(provider);
    api.propagation.setGlobalPropagator(w3c);
    const backend = new Backend();
    backend.values.set('row', 'v1');
    const reservoir = createReservoir({
      tracer: createTracer('solo'),
      providers: [memProvider(backend, 'solo')],
    });
    cleanup.add(() => reservoir.close());
    const { url } = await reservoir.listen({ port: 0 });
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const parent = 'b7ad6b7169203331';
    const answer = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'resources/read',
        'mcp-name': `${MEM_ROOT}row`,
        traceparent: `00-${traceId}-${parent}-01`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'resources/read',
        params: { uri: `${MEM_ROOT}row`, _meta: modernMeta() },
      }),
    });
    expect(answer.status).toBe(200);
    expect(provider.spans.find((s) => s.name === 'mcp resources/read')).toMatchObject({
      traceId,
      parentSpanId: parent,
      attributes: { 'reservoir.instance': 'solo' },
    });
  });
});
