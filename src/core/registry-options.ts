/**
 * What a Registry is built from (RegistryOptions) and what its list calls answer (ListPage): the
 * shapes callers and embedders write against, apart from the mount table that uses them.
 */
import type { AccessPolicy } from './access.js';
import type { ResourceHints } from './hints.js';
import type { Logger } from './log.js';
import type { ReadLayer } from './read-layer.js';
import type { SkippedSource } from './source-health.js';
import type { TemplateEngine } from './templates.js';

export interface RegistryOptions {
  /** Access rules applied to every route to a resource. @default none: everything is allowed */
  access?: AccessPolicy | undefined;
  /** Matches URIs against provider templates on read. Without one, templates are listed but reads go to `read`. */
  templateEngine?: TemplateEngine | undefined;
  /** Items per list page when the caller does not say. @default 1000 */
  pageSize?: number | undefined;
  /** Secret that seals cursors; see createCursorCodec. @default a random per-process key */
  cursorSecret?: string | Uint8Array | undefined;
  /**
   * Largest encoded read response, in bytes: base64 and JSON escaping counted, as the client will
   * receive it. @default 10354688 (10 MiB less 128 KiB: under the SDK client's 10 MiB stdio limit)
   */
  maxResponseBytes?: number | undefined;
  /**
   * Time one source may spend on its part of a `resources/list` page, ms; past it the page goes on
   * without that source (see `ListPage.skipped`). @default 2000
   */
  sourceListTimeoutMs?: number | undefined;
  /** Pause between two background probes of a source that is down, ms. @default 1000 */
  sourceProbeIntervalMs?: number | undefined;
  /** Where source outages and recoveries are logged (once per outage). @default silent */
  logger?: Logger | undefined;
  /** A layer over every source's reads (documents as Markdown: src/documents/reads.ts). @default none */
  reads?: ReadLayer | undefined;
  /** Audience and priority hints on listed resources. @default the name-derived defaults */
  hints?: ResourceHints | undefined;
}

export interface ListPage<T> {
  items: T[];
  nextCursor?: string;
  /** Sources this page went without because they failed or ran past their budget (absent when none). */
  skipped?: SkippedSource[];
}
