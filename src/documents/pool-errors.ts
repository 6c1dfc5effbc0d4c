/** The errors a conversion in the worker pool ends with: a breach of its bounds, or its failure. */
import {
  InvalidArgumentError,
  InvalidDocumentError,
  TooLargeError,
  UnsupportedError,
} from '../core/errors.js';
import type { RenderFailure, RenderLimits } from './types.js';

/**
 * A worker terminated for its job: past the time limit, out of heap, crashed, gone, or answering
 * with neither a rendition nor a failure.
 */
export function breachError(
  breach: 'time' | 'memory' | 'crash' | 'exit' | 'reply',
  uri: string,
  limits: RenderLimits,
  message?: string,
): Error {
  switch (breach) {
    case 'time':
      return new TooLargeError(uri, limits.timeoutMs, limits.timeoutMs, 'conversion time (ms)');
    case 'memory': {
      const bytes = limits.maxHeapMb * 1024 * 1024;
      return new TooLargeError(uri, bytes, bytes, 'conversion memory');
    }
    case 'crash':
      return new InvalidDocumentError(uri, `the converter failed: ${message ?? 'unknown error'}`);
    case 'exit':
      return new InvalidDocumentError(uri, 'the converter stopped unexpectedly');
    case 'reply':
      return new InvalidDocumentError(
        uri,
        'the converter answered with neither a conversion nor a failure',
      );
  }
}

/** The ReservoirError for a failure the worker reported. */
export function failureError(uri: string, failure: RenderFailure): Error {
  const data = failure.data ?? {};
  switch (failure.kind) {
    case 'unsupported':
      return new UnsupportedError(uri, failure.message, data);
    case 'too_large': {
      const error = new TooLargeError(
        uri,
        Number(data['size'] ?? 0),
        Number(data['limit'] ?? 0),
        String(data['measure'] ?? 'document'),
      );
      // The renderer's sentence says what was too large and what to do instead.
      error.message = `Resource too large to convert: ${uri}: ${failure.message}`;
      Object.assign(error.data, data, { reason: failure.message });
      return error;
    }
    case 'invalid_argument':
      return new InvalidArgumentError(String(data['argument'] ?? 'uri'), failure.message, {
        uri,
        ...data,
      });
    default:
      return new InvalidDocumentError(uri, failure.message, data);
  }
}
