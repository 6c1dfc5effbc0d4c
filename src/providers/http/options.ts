/**
 * The HTTP provider's options, in zod: what one `http` source of the config file says, validated
 * once when the provider is built. Structural checks that need more than a field's own value (the
 * URI and upstream templates of each endpoint, their variables, unique names) run here too, so a
 * config mistake is reported with its field path before anything is served.
 *
 * `${ENV}` references (secrets in `headers`) are interpolated by the config loader beforehand.
 */
import { z } from 'zod';
import { UNPASSABLE_NAME, unpassableNameMessage, wholeNumber } from '../utils/options.js';
import { parseAddressRule } from '../utils/address.js';
import { compileEndpoint, parseBase, TemplateSyntaxError } from './template.js';

/** Default per-request deadline: 10 s. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Default response cap: 7 MiB, whose base64 (9.33 MiB) still fits the SDK client's 10 MiB stdio message. */
export const DEFAULT_MAX_RESPONSE_BYTES = 7 * 1024 * 1024;
/** Default response cache bound: 32 MiB. */
export const DEFAULT_CACHE_MAX_BYTES = 32 * 1024 * 1024;
/** Default change-detection poll interval: 30 s. */
export const DEFAULT_POLL_MS = 30_000;
/** Default number of same-origin redirects followed. */
export const DEFAULT_MAX_REDIRECTS = 5;

const NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Visible ASCII, space and tab, plus obs-text; never CR, LF or NUL (no header injection).
// eslint-disable-next-line no-control-regex -- control characters are exactly what it refuses
const HEADER_VALUE = /^[^\u0000-\u0008\u000a-\u001f\u007f]*$/;
/** Headers Reservoir sets itself; configuring them would break framing or the conditional cache. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'upgrade',
  'te',
  'trailer',
  'keep-alive',
  'proxy-connection',
  'if-none-match',
  'if-modified-since',
  'accept-encoding',
]);

export const httpEndpointOptions = z
  .strictObject({
    name: z.string().min(1).meta({ description: 'The resource (or template) name clients see.' }),
    uri: z
      .string()
      .min(1)
      .meta({
        description:
          'The api:// URI or URI template, absolute (api://<source>/repos/{owner}/{repo}) or relative to the source root (repos/{owner}/{repo}). ' +
          'Each path segment is a literal or holds one {variable}; an optional final {?a,b} takes query parameters.',
      }),
    upstream: z.string().min(1).meta({
      description:
        'The upstream URL template, absolute (starting with baseUrl) or relative to baseUrl. Expressions: {v}, {/v}, {.v}, {?a,b}, {&a}; every value is percent-encoded as one segment or parameter.',
    }),
    title: z.string().optional(),
    description: z.string().optional(),
    mimeType: z.string().min(1).optional().meta({
      description: 'Listed MIME type, and the type used when the upstream sends no Content-Type.',
    }),
    complete: z
      .record(z.string(), z.array(z.string()))
      .optional()
      .meta({ description: 'Completion values by variable name, offered by prefix.' }),
  })
  .meta({
    description:
      'One upstream endpoint: a resource when its URI has no variables, a resource template otherwise.',
  });

export const httpSourceOptions = z
  .strictObject({
    name: z
      .string()
      .regex(NAME, { error: 'expected a lower-case DNS label (a-z, 0-9, -), e.g. github' })
      .meta({
        description: 'The source name: resources are api://<name>/….',
      }),
    baseUrl: z
      .url({ protocol: /^https?$/, error: 'expected an absolute http:// or https:// URL' })
      .meta({
        description: 'The upstream base URL; every request goes to its origin, under its path.',
      }),
    headers: z
      .record(
        z.string().regex(HEADER_NAME, { error: 'expected an HTTP header name' }),
        z.string().regex(HEADER_VALUE, {
          error: 'header values may not contain control characters (CR, LF, NUL)',
        }),
      )
      .optional()
      .meta({
        description:
          'Headers sent with every upstream request, e.g. Authorization: Bearer ${TOKEN}. Never logged.',
      }),
    timeoutMs: wholeNumber(1, 600_000)
      .optional()
      .meta({
        description: `Deadline of one upstream request, redirects and body included. Default: ${DEFAULT_TIMEOUT_MS}.`,
      }),
    maxResponseBytes: wholeNumber(1)
      .optional()
      .meta({
        description: `Largest upstream body read, in bytes (after decompression). Default: ${DEFAULT_MAX_RESPONSE_BYTES} (7 MiB).`,
      }),
    cacheMaxBytes: wholeNumber(0)
      .optional()
      .meta({
        description: `Bound of the response cache, in bytes; 0 disables it. Default: ${DEFAULT_CACHE_MAX_BYTES} (32 MiB).`,
      }),
    maxRedirects: wholeNumber(0, 20)
      .optional()
      .meta({
        description: `Same-origin redirects followed per request. Default: ${DEFAULT_MAX_REDIRECTS}.`,
      }),
    pollMs: wholeNumber(50)
      .optional()
      .meta({
        description: `Change detection: how often a watched resource is polled, in ms. Default: ${DEFAULT_POLL_MS}.`,
      }),
    allowPrivateNetworks: z.boolean().optional().meta({
      description:
        'Allow upstream addresses that are loopback, private, link-local, unspecified or otherwise non-public. Default: false.',
    }),
    allowedNetworks: z.array(z.string()).optional().meta({
      description:
        'Non-public addresses or CIDR ranges allowed anyway (e.g. 10.1.2.0/24, fd00::/64), when allowPrivateNetworks is false.',
    }),
    endpoints: z.array(httpEndpointOptions).min(1, { error: 'expected at least one endpoint' }),
  })
  .superRefine((options, ctx) => {
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      if (RESERVED_HEADERS.has(name.toLowerCase())) {
        ctx.addIssue({
          code: 'custom',
          path: ['headers', name],
          message: `${name} is set by Reservoir and cannot be configured`,
        });
      }
      void value;
    }
    (options.allowedNetworks ?? []).forEach((rule, index) => {
      try {
        parseAddressRule(rule);
      } catch (error) {
        ctx.addIssue({
          code: 'custom',
          path: ['allowedNetworks', index],
          message: (error as Error).message,
        });
      }
    });
    try {
      parseBase(options.baseUrl);
    } catch (error) {
      if (!(error instanceof TemplateSyntaxError)) throw error;
      ctx.addIssue({ code: 'custom', path: ['baseUrl'], message: error.message });
      return;
    }
    const names = new Set<string>();
    const uris = new Set<string>();
    options.endpoints.forEach((endpoint, index) => {
      if (names.has(endpoint.name))
        ctx.addIssue({
          code: 'custom',
          path: ['endpoints', index, 'name'],
          message: `duplicate endpoint name '${endpoint.name}'`,
        });
      names.add(endpoint.name);
      try {
        const compiled = compileEndpoint(options.name, options.baseUrl, endpoint);
        if (uris.has(compiled.uriTemplate)) {
          ctx.addIssue({
            code: 'custom',
            path: ['endpoints', index, 'uri'],
            message: `duplicate endpoint URI ${compiled.uriTemplate}`,
          });
        }
        uris.add(compiled.uriTemplate);
        if (compiled.variables.includes(UNPASSABLE_NAME)) {
          ctx.addIssue({
            code: 'custom',
            path: ['endpoints', index, 'uri'],
            message: unpassableNameMessage('the name of a URI variable'),
          });
        }
        for (const variable of Object.keys(endpoint.complete ?? {})) {
          if (!compiled.variables.includes(variable)) {
            ctx.addIssue({
              code: 'custom',
              path: ['endpoints', index, 'complete', variable],
              message: `'${variable}' is not a variable of the endpoint URI`,
            });
          }
        }
      } catch (error) {
        if (!(error instanceof TemplateSyntaxError)) throw error;
        ctx.addIssue({
          code: 'custom',
          path: ['endpoints', index, error.field],
          message: error.message,
        });
      }
    });
  })
  .meta({
    description:
      'An HTTP API source: upstream endpoints served as api://<name>/… resources and templates.',
  });

export type HttpSourceOptions = z.input<typeof httpSourceOptions>;
export type HttpEndpointOptions = z.input<typeof httpEndpointOptions>;
export type ParsedHttpSourceOptions = z.output<typeof httpSourceOptions>;
