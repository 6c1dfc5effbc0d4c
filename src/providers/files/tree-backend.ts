/**
 * The recursive tree watcher behind a files root: `dir-watch.ts` (a watch per directory), unless a
 * test injects another backend through `WatchOptions.backend`.
 */

export interface TreeEvent {
  type: 'create' | 'update' | 'delete';
  path: string;
}

/** The recursive tree watcher behind a root; `directoryBackend` (dir-watch.ts) unless a test injects another. */
export interface TreeWatcherBackend {
  /**
   * Watches `root` and everything below it but what `ignore` names (`**\/NAME`: any directory of
   * that name; an absolute path: it and what is below it). Resolves once the whole tree is watched.
   * `onError` hears a failure after that (a new directory the OS refused to watch).
   */
  subscribe(
    root: string,
    onEvents: (events: TreeEvent[]) => void,
    options: { ignore: string[]; onError?: ((error: unknown) => void) | undefined },
  ): Promise<{ unsubscribe(): Promise<void> }>;
}
