/**
 * The browse tree, built from `resources/list` pages as they arrive. Providers list in their own
 * stable, depth-first order, so a page only ever appends: each resource hangs under its source
 * (the longest served root its URI starts with, learnt from the templates) and the directories of
 * its path, created on first sight. `rows()` flattens what is expanded (and matches the name
 * filter) into the list the virtualised view draws; it costs one pass over the loaded nodes.
 */
import type { Resource } from './data';

export interface TreeNode {
  /** The URI (resources), the directory's URI with its trailing slash, or the source root. */
  key: string;
  label: string;
  kind: 'source' | 'directory' | 'resource';
  depth: number;
  resource?: Resource;
  children: TreeNode[];
  /** For the filter: whether any resource below matches (computed per rows() call). */
  parent?: TreeNode;
}

export interface Row {
  node: TreeNode;
  expanded: boolean;
}

export class ResourceTree {
  readonly sources: TreeNode[] = [];
  private readonly byKey = new Map<string, TreeNode>();
  private readonly collapsed = new Set<string>();
  private roots: string[];
  /** Every resource added, in the order the pages gave them (the flat list view). */
  private readonly loaded: Resource[] = [];
  count = 0;

  /**
   * `roots`: the served roots known from the templates, e.g. `file:///srv/docs/`. `previous`: a tree
   * this one replaces (after a list change), whose collapsed directories stay collapsed.
   */
  constructor(roots: string[], previous?: ResourceTree) {
    this.roots = [...roots].sort((a, b) => b.length - a.length);
    if (previous !== undefined) for (const key of previous.collapsed) this.collapsed.add(key);
  }

  get(key: string): TreeNode | undefined {
    return this.byKey.get(key);
  }

  add(resources: Resource[]): void {
    for (const resource of resources) this.addOne(resource);
  }

  isExpanded(node: TreeNode): boolean {
    return node.kind !== 'resource' && !this.collapsed.has(node.key);
  }

  toggle(node: TreeNode, expanded = !this.isExpanded(node)): void {
    if (node.kind === 'resource') return;
    if (expanded) this.collapsed.delete(node.key);
    else this.collapsed.add(node.key);
  }

  /** The loaded resources in list order; with a filter, those whose name (as the tree shows it) contains it. */
  resources(filter = ''): Resource[] {
    const needle = filter.trim().toLowerCase();
    if (needle === '') return this.loaded;
    return this.loaded.filter((resource) =>
      (this.byKey.get(resource.uri)?.label ?? resource.name).toLowerCase().includes(needle),
    );
  }

  /** The visible rows; with a filter, the resources whose name contains it, with their ancestors. */
  rows(filter = ''): Row[] {
    const rows: Row[] = [];
    const needle = filter.trim().toLowerCase();
    const visit = (node: TreeNode): boolean => {
      if (needle !== '') {
        if (node.kind === 'resource') {
          const hit = node.label.toLowerCase().includes(needle);
          if (hit) rows.push({ node, expanded: false });
          return hit;
        }
        const at = rows.length;
        rows.push({ node, expanded: true });
        let any = false;
        for (const child of node.children) any = visit(child) || any;
        if (!any) rows.length = at;
        return any;
      }
      const expanded = this.isExpanded(node);
      rows.push({ node, expanded });
      if (expanded) for (const child of node.children) visit(child);
      return true;
    };
    for (const source of this.sources) visit(source);
    return rows;
  }

  private addOne(resource: Resource): void {
    if (this.byKey.has(resource.uri)) return;
    const root = this.roots.find((r) => resource.uri.startsWith(r)) ?? originOf(resource.uri);
    let parent = this.byKey.get(root);
    if (parent === undefined) {
      parent = { key: root, label: sourceLabel(root), kind: 'source', depth: 0, children: [] };
      this.byKey.set(root, parent);
      this.sources.push(parent);
    }
    const rest = resource.uri.slice(root.length).split('/');
    let prefix = root;
    for (const segment of rest.slice(0, -1)) {
      prefix += `${segment}/`;
      let directory = this.byKey.get(prefix);
      if (directory === undefined) {
        directory = {
          key: prefix,
          label: decode(segment),
          kind: 'directory',
          depth: parent.depth + 1,
          children: [],
          parent,
        };
        this.byKey.set(prefix, directory);
        parent.children.push(directory);
      }
      parent = directory;
    }
    const label = decode(rest[rest.length - 1] ?? '') || resource.name;
    const node: TreeNode = {
      key: resource.uri,
      label,
      kind: 'resource',
      depth: parent.depth + 1,
      resource,
      children: [],
      parent,
    };
    this.byKey.set(resource.uri, node);
    parent.children.push(node);
    this.loaded.push(resource);
    this.count += 1;
  }
}

/** `scheme://authority/` of a URI, the fallback source of a resource under no known root. */
function originOf(uri: string): string {
  const match = /^([a-z][a-z0-9+.-]*:\/\/[^/]*\/)/i.exec(uri);
  return match?.[1] ?? `${uri.split(':')[0] ?? ''}:`;
}

function sourceLabel(root: string): string {
  if (root.startsWith('file://'))
    return decode(root.slice('file://'.length).replace(/\/$/, '')) || '/';
  return root;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * The served roots a template list reveals: each template's literal head before its first `{`. A
 * source with an authority (`db://shop/`, `git://repo/`) is one root at `scheme://authority/`:
 * its templates' heads name folders inside it (`db://shop/tables/`), not sources of their own, and
 * its other resources (`db://shop/schema`) fall back to that origin too. A `file:` root has no
 * authority: the whole head is the served directory.
 */
export function rootsOf(templates: { uriTemplate: string }[]): string[] {
  const roots = new Set<string>();
  for (const { uriTemplate } of templates) {
    const head = uriTemplate.split('{')[0] ?? '';
    if (!head.endsWith('/') || !/^[a-z][a-z0-9+.-]*:/i.test(head)) continue;
    const origin = /^[a-z][a-z0-9+.-]*:\/\/[^/]+\//i.exec(head)?.[0];
    roots.add(origin ?? head);
  }
  return [...roots];
}
