/**
 * A layer over every source's reads: it takes its own query parameters off a client URI before the
 * source sees it, and reshapes what the source answered (the document layer, src/documents/reads.ts,
 * adds a Markdown rendition and serves pages, sheets and slides). It also adds templates beside a
 * source's own. Defined here so the Registry knows the shape, not the implementation.
 */
import type { CallContext, Provider, ReadResult, ResourceTemplate } from './types.js';

/** One read as the layer prepared it. */
export interface PreparedRead {
  /** The URI the source reads (the client's, less the layer's own parameters). */
  source: string;
  /** Reshapes the source's answer; `maxBytes` is the response cap the answer must fit. */
  finish(result: ReadResult, ctx: CallContext, maxBytes: number): Promise<ReadResult>;
  /**
   * Set when the answer is made from the resource rather than being it (a document read for its
   * rendition): the source may read up to this many bytes past its own cap and the response budget
   * (CallContext.renderMaxBytes), since the original is not what is sent whole.
   */
  renderMaxBytes?: number;
  /** The error the client sees for one the source threw (a document over its cap says so). */
  explain?(error: unknown): unknown;
}

/** Reads a URI through the registry, as the caller (access rules applied). */
export type RegistryRead = (uri: string, ctx: CallContext) => Promise<ReadResult>;

export interface ReadLayer {
  /**
   * How to read `href` (normalised, routed to `provider`), or undefined when the layer has nothing
   * to do with it. Throws InvalidArgumentError for a malformed parameter of its own. A parameter the
   * provider's templates name is the provider's, and left alone.
   */
  prepare(href: string, provider: Provider): PreparedRead | undefined;
  /** Templates the layer adds beside `provider`'s own (with completers that read through `read`). */
  templates?(provider: Provider, read: RegistryRead): ResourceTemplate[];
  /**
   * Whether a plain read of this resource through the layer answers text that the source alone
   * does not (a document's rendition): the search index then reads it through the layer, and allows
   * its original up to the read cap rather than the index's text cap.
   */
  renders?(mimeType: string | undefined, uri: string): boolean;
  close?(): Promise<void>;
}
