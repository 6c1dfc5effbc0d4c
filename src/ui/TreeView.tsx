/**
 * The browse tree as a virtualised list: only the rows in view (plus a margin) exist in the DOM, so
 * 100,000 loaded resources scroll as smoothly as 100. Reaching the end of what is loaded asks for
 * the next page. Keyboard: ↑/↓ move, → expands, ← collapses (or goes to the parent), Enter opens,
 * `c` copies the URI.
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { JSX } from 'preact';
import { kindOf } from './render';
import { Icon } from './icons';
import type { ResourceTree, Row, TreeNode } from './tree';

const ROW_HEIGHT = 28;
const OVERSCAN = 12;

export interface TreeViewProps {
  tree: ResourceTree;
  rows: Row[];
  selected: string | undefined;
  loading: boolean;
  hasMore: boolean;
  onSelect(node: TreeNode): void;
  onOpen(node: TreeNode): void;
  onToggle(node: TreeNode, expanded?: boolean): void;
  onMore(): void;
  onCopy(uri: string): void;
}

export function TreeView(props: TreeViewProps): JSX.Element {
  const { rows, selected } = props;
  const scroller = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(600);

  useLayoutEffect(() => {
    const element = scroller.current;
    if (element === null) return undefined;
    const observer = new ResizeObserver(() => setHeight(element.clientHeight));
    observer.observe(element);
    setHeight(element.clientHeight);
    return () => observer.disconnect();
  }, []);

  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((scrollTop + height) / ROW_HEIGHT) + OVERSCAN);

  // The end of what is loaded is in view: fetch the next page.
  useEffect(() => {
    if (props.hasMore && !props.loading && last >= rows.length - OVERSCAN) props.onMore();
  }, [last, rows.length, props.hasMore, props.loading]);

  const index = rows.findIndex((row) => row.node.key === selected);
  const move = (to: number): void => {
    const row = rows[Math.max(0, Math.min(rows.length - 1, to))];
    if (row === undefined) return;
    props.onSelect(row.node);
    const element = scroller.current;
    if (element === null) return;
    const top = rows.indexOf(row) * ROW_HEIGHT;
    if (top < element.scrollTop) element.scrollTop = top;
    else if (top + ROW_HEIGHT > element.scrollTop + element.clientHeight)
      element.scrollTop = top + ROW_HEIGHT - element.clientHeight;
  };

  const onKeyDown = (event: KeyboardEvent): void => {
    const row = rows[index];
    switch (event.key) {
      case 'ArrowDown':
        move(index + 1);
        break;
      case 'ArrowUp':
        move(index - 1);
        break;
      case 'Home':
        move(0);
        break;
      case 'End':
        move(rows.length - 1);
        break;
      case 'PageDown':
        move(index + Math.floor(height / ROW_HEIGHT));
        break;
      case 'PageUp':
        move(index - Math.floor(height / ROW_HEIGHT));
        break;
      case 'ArrowRight':
        if (row !== undefined && row.node.kind !== 'resource' && !row.expanded)
          props.onToggle(row.node, true);
        else move(index + 1);
        break;
      case 'ArrowLeft':
        if (row !== undefined && row.node.kind !== 'resource' && row.expanded)
          props.onToggle(row.node, false);
        else if (row?.node.parent !== undefined)
          move(rows.findIndex((r) => r.node === row.node.parent));
        break;
      case 'Enter':
        if (row !== undefined) props.onOpen(row.node);
        break;
      case 'c':
        if (row !== undefined && !event.ctrlKey && !event.metaKey) props.onCopy(row.node.key);
        else return;
        break;
      default:
        return;
    }
    event.preventDefault();
  };

  const visible = rows.slice(first, last);
  return (
    <div
      class="tree"
      ref={scroller}
      role="tree"
      aria-label="Resources"
      tabIndex={0}
      aria-activedescendant={index >= 0 ? `row-${index}` : undefined}
      onScroll={(event) => setScrollTop((event.currentTarget as HTMLDivElement).scrollTop)}
      onKeyDown={onKeyDown}
    >
      <div
        class="tree-spacer"
        style={{ height: `${rows.length * ROW_HEIGHT + (props.hasMore ? ROW_HEIGHT : 0)}px` }}
      >
        {visible.map((row, offset) => {
          const at = first + offset;
          const node = row.node;
          const kind =
            node.kind === 'resource' ? kindOf(node.resource?.mimeType, node.label) : node.kind;
          return (
            <div
              key={node.key}
              id={`row-${at}`}
              class={`tree-row${node.key === selected ? ' selected' : ''}`}
              role="treeitem"
              aria-level={node.depth + 1}
              aria-expanded={node.kind === 'resource' ? undefined : row.expanded}
              aria-selected={node.key === selected}
              data-uri={node.key}
              style={{ top: `${at * ROW_HEIGHT}px`, paddingLeft: `${8 + node.depth * 16}px` }}
              onClick={() => {
                props.onSelect(node);
                if (node.kind === 'resource') props.onOpen(node);
                else props.onToggle(node);
              }}
            >
              <span class="twisty">{node.kind === 'resource' ? '' : row.expanded ? '▾' : '▸'}</span>
              <Icon name={kind} />
              <span class="label">{node.label}</span>
              <button
                class="copy"
                title="Copy URI"
                aria-label={`Copy URI of ${node.label}`}
                onClick={(event) => {
                  event.stopPropagation();
                  props.onCopy(node.key);
                }}
              >
                <Icon name="copy" />
              </button>
            </div>
          );
        })}
        {props.hasMore ? (
          <div class="tree-row more" style={{ top: `${rows.length * ROW_HEIGHT}px` }}>
            {props.loading ? 'Loading more…' : 'More resources follow'}
          </div>
        ) : null}
      </div>
    </div>
  );
}
