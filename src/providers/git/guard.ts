/**
 * Every git provider operation runs guarded: git's failures become the core's errors under the
 * URI the client asked for (an object or an output over the cap is too_large, a missing
 * repository unavailable — see utils/errors.ts), and a cancelled call gives up at once.
 */
import { TooLargeError } from '../../core/errors.js';
import { providerError } from '../utils/errors.js';
import { ObjectTooLarge } from './cat-file.js';
import { OutputTooLarge } from './exec.js';

/** Runs `work`, turning git failures into errors under `uri`; gives up as soon as `signal` aborts. */
export async function guarded<T>(
  uri: string,
  maxReadBytes: number,
  work: () => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  try {
    signal?.throwIfAborted();
    return await (signal === undefined ? work() : abortable(work(), signal));
  } catch (error) {
    throw translate(uri, error, maxReadBytes);
  }
}

/** The core error a git failure under `uri` is answered with. */
export function translate(uri: string, error: unknown, maxReadBytes: number): unknown {
  if (error instanceof ObjectTooLarge) return new TooLargeError(uri, error.info.size, maxReadBytes);
  if (error instanceof OutputTooLarge)
    return new TooLargeError(uri, error.size ?? error.limit + 1, maxReadBytes, 'output');
  return providerError(uri, error); // a GitFailure (git's exit statuses, worded by exec.ts), an errno …
}

/** `promise`, or the abort reason as soon as `signal` aborts (object reads in flight finish unobserved). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      promise.catch(() => undefined); // its outcome no longer matters to anyone
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
