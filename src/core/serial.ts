/**
 * Runs async tasks one at a time, in the order they were handed in: each starts once the one before
 * it settled (fulfilled or rejected). What one task does to shared state (a session's subscriptions,
 * say) is never interleaved with another's awaits.
 */
export class Serial {
  private tail: Promise<unknown> = Promise.resolve();

  /** `task`'s result, once every task handed in before it has settled and it has run. */
  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
