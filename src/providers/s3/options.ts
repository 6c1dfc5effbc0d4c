/**
 * The S3 provider's options, in zod: what one `s3` source of the config file says (the catalog adds
 * `type: s3`), validated again by the factory, so a bad value fails the same way from the config
 * and from code. Credentials may be written as `${VAR}` (interpolated by the config loader); when
 * absent, the standard AWS chain applies (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, the shared
 * profile, instance roles). They are never logged.
 */
import { z } from 'zod';
import { parseAddressRule } from '../utils/address.js';
import { strict, wholeNumber } from '../utils/options.js';

/** Default read cap: 7 MiB, as the files provider (its base64 still fits a 10 MiB stdio message). */
export const DEFAULT_MAX_READ_BYTES = 7 * 1024 * 1024;
/** How often a subscribed prefix is polled, ms. */
export const DEFAULT_POLL_INTERVAL_MS = 5_000;
/** Most ListObjectsV2 requests one poll of one prefix makes (1,000 keys each). */
export const DEFAULT_MAX_POLL_REQUESTS = 10;
/** Deadline of one S3 request, ms. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** Bucket names as S3 allows them for new buckets (3-63 characters: a-z, 0-9, '.', '-'). */
export const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export const s3SourceOptions = strict(
  {
    bucket: z
      .string()
      .regex(BUCKET_NAME, {
        error:
          "expected an S3 bucket name: 3-63 characters a-z, 0-9, '.' and '-', starting and ending with a letter or digit",
      })
      .meta({
        description: 'The bucket; resources are s3://BUCKET/KEY.',
      }),
    name: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, {
        error: "expected letters, digits, '.', '_' and '-' (at most 63)",
      })
      .optional()
      .meta({
        description: 'A name for logs. Default: the bucket name.',
      }),
    prefix: z
      .string()
      .min(1)
      .refine((prefix) => prefix.endsWith('/'), {
        error: "expected a key prefix ending in '/' (e.g. docs/)",
      })
      .optional()
      .meta({
        description:
          "Serve only keys under this prefix (ending in '/'). Default: the whole bucket.",
      }),
    region: z
      .string()
      .min(1)
      .optional()
      .meta({ description: "The bucket's region. Default: AWS_REGION, else us-east-1." }),
    endpoint: z
      .url({ protocol: /^https?$/, error: 'expected an absolute http:// or https:// URL' })
      .optional()
      .meta({
        description:
          "An S3-compatible endpoint (MinIO, Ceph, R2). Its address passes the same rules as the http source's upstreams.",
      }),
    forcePathStyle: z.boolean().optional().meta({
      description:
        'Address the bucket in the path (endpoint/BUCKET/KEY), as most S3-compatible stores need. Default: false.',
    }),
    accessKeyId: z.string().min(1).optional().meta({
      description:
        'Access key id, e.g. ${S3_KEY}. Default: the standard AWS credential chain. Never logged.',
    }),
    secretAccessKey: z.string().min(1).optional().meta({
      description: 'Secret access key, e.g. ${S3_SECRET}; given with accessKeyId. Never logged.',
    }),
    sessionToken: z
      .string()
      .min(1)
      .optional()
      .meta({ description: 'Session token of temporary credentials. Never logged.' }),
    allowPrivateNetworks: z.boolean().optional().meta({
      description:
        'Allow an endpoint whose address is loopback, private, link-local or otherwise non-public. Default: false.',
    }),
    allowedNetworks: z.array(z.string()).optional().meta({
      description:
        'Non-public addresses or CIDR ranges allowed anyway, when allowPrivateNetworks is false.',
    }),
    maxReadBytes: wholeNumber(1, 2 ** 31 - 1)
      .optional()
      .meta({
        description: `Largest object one read returns, in bytes; larger ones are read by range. Default: ${DEFAULT_MAX_READ_BYTES} (7 MiB).`,
      }),
    pollIntervalMs: wholeNumber(50, 3_600_000)
      .optional()
      .meta({
        description: `How often a subscribed prefix is polled, ms (doubling on errors, up to 64x). Default: ${DEFAULT_POLL_INTERVAL_MS}.`,
      }),
    maxPollRequests: wholeNumber(1, 1_000)
      .optional()
      .meta({
        description: `Most list requests one poll of one prefix makes. Default: ${DEFAULT_MAX_POLL_REQUESTS}.`,
      }),
    timeoutMs: wholeNumber(100, 600_000)
      .optional()
      .meta({ description: `Deadline of one S3 request, ms. Default: ${DEFAULT_TIMEOUT_MS}.` }),
  },
  'An S3 bucket (or a prefix of one) served as s3:// resources.',
).superRefine((options, ctx) => {
  if ((options.accessKeyId === undefined) !== (options.secretAccessKey === undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: [options.accessKeyId === undefined ? 'accessKeyId' : 'secretAccessKey'],
      message: 'give accessKeyId and secretAccessKey together',
    });
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
});

export type S3SourceOptions = z.input<typeof s3SourceOptions>;
export type ParsedS3SourceOptions = z.output<typeof s3SourceOptions>;
