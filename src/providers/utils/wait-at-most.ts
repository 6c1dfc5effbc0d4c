/**
 * Waiting for background work with a budget: a list page gives its content hints a few
 * milliseconds, then answers with what is ready while the rest finishes for later pages.
 */

/** Resolves when `work` settles or `ms` pass, whichever is first; never rejects. */
export async function waitAtMost(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      work.then(
        () => undefined,
        () => undefined,
      ),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
