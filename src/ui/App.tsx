/**
 * The explorer's layout: the browse tree (left), search, the preview of the open resource, and
 * tabs for templates, prompts, tools and "who am I". The open resource and the tree are live: a
 * `subscriptions/listen` stream watches the open URI and the list, and a change re-reads what it
 * touched and shows "changed just now".
 */
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { JSX } from 'preact';
import type { DataSource, Live, PromptInfo, Resource, Template, ToolInfo } from './data';
import { Icon } from './icons';
import { PromptsPanel, TemplatesPanel, ToolsPanel, WhoAmIPanel } from './panels';
import { Preview } from './Preview';
import { Search } from './Search';
import { ResourceTree, rootsOf, type TreeNode } from './tree';
import { TreeView } from './TreeView';
import { ListView } from './ListView';

type Tab = 'preview' | 'search' | 'templates' | 'prompts' | 'tools' | 'whoami';

type View = 'tree' | 'list';
const VIEW_KEY = 'reservoir.view';

/** The remembered browse view (localStorage; a sandbox without storage gets the tree). */
function savedView(): View {
  try {
    return localStorage.getItem(VIEW_KEY) === 'list' ? 'list' : 'tree';
  } catch {
    return 'tree';
  }
}

function saveView(view: View): void {
  try {
    localStorage.setItem(VIEW_KEY, view);
  } catch {
    // No storage here (a sandboxed host frame): the choice lasts until the page closes.
  }
}

export function App({ data }: { data: DataSource }): JSX.Element {
  const [templates, setTemplates] = useState<Template[]>([]);
  const [tools, setTools] = useState<ToolInfo[]>([]);
  const [prompts, setPrompts] = useState<PromptInfo[]>([]);
  const [tree, setTree] = useState<ResourceTree | undefined>(undefined);
  const [treeVersion, setTreeVersion] = useState(0);
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const [hasMore, setHasMore] = useState(true);
  const [loading, setLoading] = useState(false);
  const [filter, setFilter] = useState('');
  const [selected, setSelected] = useState<string | undefined>(undefined);
  const [open, setOpen] = useState<Resource | undefined>(undefined);
  const [openVersion, setOpenVersion] = useState(0);
  const [changedAt, setChangedAt] = useState<number | undefined>(undefined);
  const [treeChangedAt, setTreeChangedAt] = useState<number | undefined>(undefined);
  const [tab, setTab] = useState<Tab>('preview');
  const [status, setStatus] = useState<string | undefined>(undefined);
  const [picked, setPicked] = useState<Resource[]>([]);
  const [view, setView] = useState<View>(savedView);
  /** The URI the live stream is known to watch (`''` for the list only), once the server acknowledged it. */
  const [watching, setWatching] = useState<string | undefined>(undefined);
  const live = useRef<Live | undefined>(undefined);
  const openRef = useRef<Resource | undefined>(undefined);
  openRef.current = open;

  const loadPage = useCallback(
    async (target: ResourceTree, after: string | undefined): Promise<void> => {
      setLoading(true);
      try {
        const page = await data.listResources(after);
        target.add(page.resources);
        setCursor(page.nextCursor);
        setHasMore(page.nextCursor !== undefined);
        setTreeVersion((v) => v + 1);
      } catch (failure) {
        setStatus(failure instanceof Error ? failure.message : String(failure));
        setHasMore(false);
      } finally {
        setLoading(false);
      }
    },
    [data],
  );

  const current = useRef<ResourceTree | undefined>(undefined);
  const rebuild = useCallback(
    async (known: Template[]): Promise<void> => {
      const fresh = new ResourceTree(rootsOf(known), current.current);
      current.current = fresh;
      setTree(fresh);
      await loadPage(fresh, undefined);
    },
    [loadPage],
  );

  useEffect(() => {
    void (async () => {
      const found = (await data.listTemplates?.().catch(() => [])) ?? [];
      setTemplates(found);
      await rebuild(found);
      setTools(await data.listTools().catch(() => []));
      setPrompts((await data.listPrompts?.().catch(() => [])) ?? []);
    })();
    if (data.live === undefined) return undefined;
    const handle = data.live({
      updated: (uri) => {
        if (openRef.current?.uri === uri) {
          setOpenVersion((v) => v + 1);
          setChangedAt(Date.now());
        }
      },
      listChanged: () => {
        setTreeChangedAt(Date.now());
        setTemplates((known) => (void rebuild(known), known));
      },
    });
    live.current = handle;
    return () => void handle.close();
  }, [data]);

  // Inside a host: open where open_explorer was asked to start.
  useEffect(() => data.onStartAt?.((uri) => openUri(uri)), [data]);

  // Watch the open resource and the list.
  useEffect(() => {
    const uri = open?.uri ?? '';
    setWatching(undefined);
    void live.current
      ?.watch(uri === '' ? [] : [uri], true)
      .then(() => setWatching(uri))
      .catch(() => undefined);
  }, [open?.uri, live.current]);

  const rows = useMemo(() => tree?.rows(filter) ?? [], [tree, treeVersion, filter]);
  const listed = useMemo(
    () => (view === 'list' ? [...(tree?.resources(filter) ?? [])] : []),
    [tree, treeVersion, filter, view],
  );
  const choose = (next: View): void => {
    setView(next);
    saveView(next);
  };
  const sources = useMemo(() => tree?.sources.map((s) => s.key) ?? [], [tree, treeVersion]);
  const lineTemplates = useMemo(
    () =>
      templates
        .filter((t) => t.uriTemplate.endsWith('{?lines}'))
        .map((t) => t.uriTemplate.split('{')[0] ?? ''),
    [templates],
  );
  const toolNames = new Set(tools.map((t) => t.name));

  const openResource = (resource: Resource): void => {
    setOpen(resource);
    setChangedAt(undefined);
    setTab('preview');
    setSelected(resource.uri);
  };
  const openUri = (uri: string): void =>
    openResource(
      tree?.get(uri)?.resource ?? {
        uri,
        name: decodeURIComponent(uri.replace(/\/$/, '').split('/').pop() ?? uri),
      },
    );
  const openNode = (node: TreeNode): void => {
    if (node.resource !== undefined) openResource(node.resource);
    else openResource({ uri: node.key, name: node.label, mimeType: 'inode/directory' });
  };
  const copy = (uri: string): void => {
    void navigator.clipboard
      ?.writeText(uri)
      .then(() => setStatus(`Copied ${uri}`))
      .catch(() => setStatus(uri));
  };

  return (
    <div class="app" data-watching={watching}>
      <header class="top">
        <h1>
          <Icon name="source" /> Reservoir
        </h1>
        <span class="server">
          {data.server()?.version === undefined ? '' : `v${data.server()!.version}`}
        </span>
        {treeChangedAt === undefined ? null : <span class="changed">tree changed just now</span>}
        <span class="status" role="status">
          {status ?? ''}
        </span>
      </header>
      <aside class="side">
        <input
          class="filter"
          type="search"
          placeholder="Filter by name"
          aria-label="Filter by name"
          value={filter}
          onInput={(e) => setFilter((e.currentTarget as HTMLInputElement).value)}
        />
        <div class="view-toggle" role="group" aria-label="View">
          {(['tree', 'list'] as View[]).map((v) => (
            <button
              key={v}
              aria-pressed={view === v}
              class={view === v ? 'current' : ''}
              onClick={() => choose(v)}
            >
              {v === 'tree' ? 'Tree' : 'List'}
            </button>
          ))}
        </div>
        <p class="count muted">
          {tree?.count ?? 0} loaded{hasMore ? ', more follow' : ''}
        </p>
        {tree === undefined ? null : view === 'list' ? (
          <ListView
            resources={listed}
            selected={selected}
            loading={loading}
            hasMore={hasMore}
            onOpen={openResource}
            onMore={() => void loadPage(tree, cursor)}
          />
        ) : (
          <TreeView
            tree={tree}
            rows={rows}
            selected={selected}
            loading={loading}
            hasMore={hasMore}
            onSelect={(node) => setSelected(node.key)}
            onOpen={openNode}
            onToggle={(node, expanded) => (
              tree.toggle(node, expanded),
              setTreeVersion((v) => v + 1)
            )}
            onMore={() => void loadPage(tree, cursor)}
            onCopy={copy}
          />
        )}
      </aside>
      <main class="main">
        <nav class="tabs" role="tablist">
          {(['preview', 'search', 'templates', 'prompts', 'tools', 'whoami'] as Tab[])
            .filter((t) => data.kind === 'http' || t === 'preview' || t === 'search')
            .map((t) => (
              <button
                key={t}
                role="tab"
                aria-selected={tab === t}
                class={tab === t ? 'current' : ''}
                onClick={() => setTab(t)}
              >
                {t === 'whoami' ? 'Who am I' : t[0]!.toUpperCase() + t.slice(1)}
              </button>
            ))}
        </nav>
        {tab === 'preview' ? (
          open === undefined ? (
            <p class="muted empty">Pick a resource in the tree, or search.</p>
          ) : (
            <>
              {data.pick === undefined ? null : (
                <button
                  class="pick"
                  onClick={() =>
                    void data.pick!([...picked, open]).then(() => setPicked((p) => [...p, open]))
                  }
                >
                  Add to conversation
                </button>
              )}
              <Preview
                data={data}
                resource={open}
                lineTemplates={lineTemplates}
                version={openVersion}
                changedAt={changedAt}
                onOpen={openUri}
              />
            </>
          )
        ) : null}
        {tab === 'search' ? (
          <Search
            data={data}
            fullText={toolNames.has('search_resources')}
            sources={sources}
            onOpen={openResource}
          />
        ) : null}
        {tab === 'templates' ? (
          <TemplatesPanel data={data} templates={templates} onOpenUri={openUri} />
        ) : null}
        {tab === 'prompts' ? <PromptsPanel data={data} prompts={prompts} /> : null}
        {tab === 'tools' ? <ToolsPanel data={data} tools={tools} /> : null}
        {tab === 'whoami' ? (
          <WhoAmIPanel data={data} available={toolNames.has('who_am_i')} />
        ) : null}
      </main>
    </div>
  );
}
