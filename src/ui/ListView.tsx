/**
 * The flat list beside the tree: every loaded resource in the order `resources/list` gave it, as a
 * table (name and URI, type, size, modified), a page of LIST_PAGE rows at a time. "Show more"
 * shows the next rows and, when fewer are loaded, asks the server for its next page with the same
 * cursor the tree uses. Keyboard: each name is a button (Tab, Enter opens).
 */
import { useState } from 'preact/hooks';
import type { JSX } from 'preact';
import type { Resource } from './data';
import { Icon } from './icons';
import { formatBytes, kindOf } from './render';

export const LIST_PAGE = 100;

export interface ListViewProps {
  resources: Resource[];
  selected: string | undefined;
  loading: boolean;
  hasMore: boolean;
  onOpen(resource: Resource): void;
  onMore(): void;
}

export function ListView(props: ListViewProps): JSX.Element {
  const [shown, setShown] = useState(LIST_PAGE);
  const rows = props.resources.slice(0, shown);
  const more = props.resources.length > shown || props.hasMore;
  const showMore = (): void => {
    setShown((n) => n + LIST_PAGE);
    if (props.resources.length < shown + LIST_PAGE && props.hasMore && !props.loading)
      props.onMore();
  };
  return (
    <div class="list-view">
      <table aria-label="Resources">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Type</th>
            <th scope="col">Size</th>
            <th scope="col">Modified</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((resource) => (
            <tr
              key={resource.uri}
              data-uri={resource.uri}
              class={resource.uri === props.selected ? 'selected' : ''}
            >
              <td>
                <button
                  class="link"
                  title={resource.uri}
                  aria-current={resource.uri === props.selected ? 'true' : undefined}
                  onClick={() => props.onOpen(resource)}
                >
                  <Icon name={kindOf(resource.mimeType, resource.name)} />
                  <span>{resource.title ?? resource.name}</span>
                </button>
                <span class="list-uri">{resource.uri}</span>
              </td>
              <td>{resource.mimeType ?? ''}</td>
              <td>{resource.size === undefined ? '' : formatBytes(resource.size)}</td>
              <td>
                {resource.annotations?.lastModified === undefined
                  ? ''
                  : modified(resource.annotations.lastModified)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="count muted">
        {rows.length} of {props.resources.length} loaded
        {props.hasMore ? ', more on the server' : ''}
      </p>
      {more ? (
        <button class="list-more" disabled={props.loading} onClick={showMore}>
          {props.loading ? 'Loading more…' : `Show ${LIST_PAGE} more`}
        </button>
      ) : null}
    </div>
  );
}

/** An ISO timestamp as local date and minutes; anything else as given. */
function modified(stamp: string): string {
  const at = new Date(stamp);
  if (Number.isNaN(at.getTime())) return stamp;
  return `${at.toLocaleDateString('en-CA')} ${at.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' })}`;
}
