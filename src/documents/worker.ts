/**
 * The document worker's entry point: a worker thread (started by pool.ts with heap limits) that
 * converts one document per message and posts back the rendition or the failure. The document's
 * bytes arrive transferred; nothing here touches the network or runs a document's scripts.
 */
import { parentPort } from 'node:worker_threads';
import { failureOf, renderInProcess } from './render.js';
import type { DocumentKind, DocumentParts, RenderLimits } from './types.js';

interface Job {
  id: number;
  bytes: Uint8Array;
  kind: DocumentKind;
  parts: DocumentParts;
  limits: RenderLimits;
}

parentPort?.on('message', (job: Job) => {
  renderInProcess(job.bytes, job.kind, job.parts, job.limits).then(
    (rendition) => parentPort?.postMessage({ id: job.id, rendition }),
    (error: unknown) => parentPort?.postMessage({ id: job.id, failure: failureOf(error) }),
  );
});
