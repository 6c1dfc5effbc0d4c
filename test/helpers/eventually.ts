/**
 * The one way a test waits for something it cannot be told about: poll a check quickly until it
 * holds, and fail at a deadline with a message naming what never happened (and the check's last
 * error, when it threw). Tests wait on events first — a notification, a log line, a promise — and
 * use this only where the code under test offers no event (a row in pg_stat_activity, a process in
 * /proc, a file on disk). The deadline is a ceiling for a hung run, never a speed claim: it is
 * generous, and a test that needs "before X happens on its own" says so with a deadline below X.
 */

export interface EventuallyOptions {
  /** When to give up, in ms from the first check. @default 10_000 */
  deadlineMs?: number;
  /** The pause between checks, in ms. @default 10 */
  stepMs?: number;
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Resolves with the first truthy value `check` returns; a falsy value or a throw means "not yet".
 * Rejects after `deadlineMs` with `timed out after N ms waiting for <what>`.
 *
 * @example
 *   await eventually(() => recorder.events.length === 2, 'two notifications');
 *   const pid = await eventually(async () => (await backends()).at(0), 'the backend to start', { deadlineMs: 15_000 });
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  what: string | (() => string),
  options: EventuallyOptions = {},
): Promise<NonNullable<T>> {
  const deadlineMs = options.deadlineMs ?? 10_000;
  const stepMs = options.stepMs ?? 10;
  const deadline = Date.now() + deadlineMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== null && value !== false && value !== 0 && value !== '')
        return value as NonNullable<T>;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const label = typeof what === 'string' ? what : what();
      const cause =
        lastError === undefined
          ? ''
          : `; last check threw: ${lastError instanceof Error ? lastError.message : String(lastError)}`;
      throw new Error(`timed out after ${deadlineMs} ms waiting for ${label}${cause}`);
    }
    await pause(stepMs);
  }
}

/**
 * Calls `probe` until `accept` holds for what it returned, and resolves with that value; the
 * deadline's message shows the last value seen. For state that changes behind a read (a list that
 * skips a source once it has noticed the outage, a log that gains a line).
 *
 * @example
 *   const down = await eventuallyAccepted(() => listAll(client), (l) => l.skipped.length > 0, 'the source to be skipped');
 */
export async function eventuallyAccepted<T>(
  probe: () => Promise<T>,
  accept: (value: T) => boolean,
  what: string,
  options: EventuallyOptions = {},
): Promise<T> {
  let last: { value: T } | undefined;
  const accepted = await eventually(
    async () => {
      last = { value: await probe() };
      return accept(last.value) ? last : undefined;
    },
    () => `${what}; last: ${last === undefined ? 'none' : JSON.stringify(last.value)}`,
    options,
  );
  return accepted.value;
}
