/**
 * OpenTelemetry traces through `@opentelemetry/api`: a no-op unless the embedder registers an SDK
 * (NodeSDK, a tracer provider). One span per MCP operation (`mcp <method>`, continuing the W3C
 * `traceparent` the request carried in `_meta` or its headers) and one per provider call
 * (`provider <call>`, a child of the operation while the SDK's context manager runs), each with the
 * instance id. Loaded only in cluster mode, so a plain server never loads the API.
 */
import { createRequire } from 'node:module';
import type * as Otel from '@opentelemetry/api';
import type { Provider } from '../core/types.js';
import type { OperationTracer } from '../mcp/guarded-call.js';
import { definedProps } from '../core/defined.js';

const TRACER_NAME = 'mcp-reservoir';

/** Spans per operation (`operation`) and per provider call (`provider` wraps a provider). */
export interface ReservoirTracer extends OperationTracer {
  provider(provider: Provider): Provider;
}

/**
 * A tracer for `ReservoirOptions.tracer` (cluster mode makes one by itself): `instance` names this
 * process on every span.
 *
 * @example
 * createReservoir({ tracer: createTracer(process.env.HOSTNAME ?? 'reservoir') });
 */
export function createTracer(instance: string): ReservoirTracer {
  const api = createRequire(import.meta.url)('@opentelemetry/api') as typeof Otel;
  const tracer = (): Otel.Tracer => api.trace.getTracer(TRACER_NAME);

  const inSpan = async <T>(
    name: string,
    attributes: Otel.Attributes,
    parent: Otel.Context,
    work: () => Promise<T>,
  ): Promise<T> => {
    const span = tracer().startSpan(
      name,
      { kind: api.SpanKind.SERVER, attributes: { 'reservoir.instance': instance, ...attributes } },
      parent,
    );
    try {
      const result = await api.context.with(api.trace.setSpan(parent, span), work);
      span.setStatus({ code: api.SpanStatusCode.OK });
      return result;
    } catch (error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({
        code: api.SpanStatusCode.ERROR,
        message: error instanceof Error ? error.message : String(error),
      });
      throw error;
    } finally {
      span.end();
    }
  };

  return {
    operation(op, work) {
      const parent =
        Object.keys(op.carrier).length === 0
          ? api.context.active()
          : api.propagation.extract(api.ROOT_CONTEXT, op.carrier);
      return inSpan(
        `mcp ${op.method}`,
        {
          'mcp.method': op.method,
          ...definedProps({ 'mcp.target': op.target }),
          'reservoir.principal.kind': op.principal.kind,
        },
        parent,
        work,
      );
    },
    /** The provider with a span around each call. */
    provider(provider) {
      const traced = new Set(['list', 'read', 'canonical', 'complete']);
      return new Proxy(provider, {
        get(target, key, receiver) {
          const value: unknown = Reflect.get(target, key, receiver);
          if (typeof value !== 'function') return value;
          // Methods run on the provider itself (private fields, identity), traced or not.
          if (typeof key !== 'string' || !traced.has(key))
            return (value as (...a: unknown[]) => unknown).bind(target);
          return (...args: unknown[]) =>
            inSpan(
              `provider ${key}`,
              {
                'reservoir.source': target.root,
                'reservoir.provider': target.name,
                ...definedProps({
                  'mcp.uri': typeof args[0] === 'string' && key !== 'list' ? args[0] : undefined,
                }),
              },
              api.context.active(),
              async () => (value as (...a: unknown[]) => unknown).apply(target, args),
            );
        },
      });
    },
  };
}
