/**
 * The recursive tree watcher behind a files root: `@parcel/watcher`, loaded on first use, unless a
 * test injects another backend through `WatchOptions.backend`.
 */

export interface TreeEvent {
  type: 'create' | 'update' | 'delete';
  path: string;
}

/** The recursive tree watcher behind a root; `@parcel/watcher` unless a test injects another. */
export interface TreeWatcherBackend {
  subscribe(
    root: string,
    onEvents: (events: TreeEvent[]) => void,
    options: { ignore: string[] },
  ): Promise<{ unsubscribe(): Promise<void> }>;
}

let parcel: TreeWatcherBackend | undefined;

/** `@parcel/watcher`, loaded on first use so a bare import of the library does not load it. */
export async function parcelBackend(): Promise<TreeWatcherBackend> {
  if (parcel !== undefined) return parcel;
  const watcher = await import('@parcel/watcher');
  parcel = {
    async subscribe(root, onEvents, options) {
      return watcher.subscribe(
        root,
        (error, events) => {
          if (error === null) onEvents(events as TreeEvent[]);
        },
        options,
      );
    },
  };
  return parcel;
}
