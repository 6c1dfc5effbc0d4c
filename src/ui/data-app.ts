/**
 * The explorer inside a host that renders MCP Apps: the page reaches the server through the host's
 * App bridge (postMessage to the host, which forwards to this server), and the resources the user
 * picks go back to the host as `resource_link` blocks in the model's context.
 */
import { App, PostMessageTransport } from '@modelcontextprotocol/ext-apps';
import { DataError, type DataSource, type Resource, type ToolInfo } from './data';
import { definedProps } from '../core/defined.js';

export async function connectApp(): Promise<DataSource> {
  const app = new App({ name: 'reservoir-explorer', version: '1.0.0' }, {});
  // open_explorer's `under` argument, as the host relays the tool call that opened the page.
  let startAt: string | undefined;
  const starts = new Set<(uri: string) => void>();
  app.addEventListener('toolinput', (params) => {
    const under = (params.arguments as { under?: unknown } | undefined)?.under;
    if (typeof under !== 'string') return;
    startAt = under;
    for (const listener of starts) listener(under);
  });
  await app.connect(new PostMessageTransport(window.parent, window.parent));
  const guard = async <T>(work: Promise<T>): Promise<T> => {
    try {
      return await work;
    } catch (error) {
      throw new DataError(
        error instanceof Error ? error.message : String(error),
        /not found/i.test(String(error)) ? 'not_found' : 'other',
      );
    }
  };
  return {
    kind: 'app',
    server: () => undefined,
    async listResources(cursor) {
      const page = await guard(app.listServerResources(cursor === undefined ? {} : { cursor }));
      return { resources: page.resources as Resource[], nextCursor: page.nextCursor };
    },
    readResource: (uri) => guard(app.readServerResource({ uri })),
    // The bridge forwards calls, not listings, of server tools: the page offers those it knows.
    listTools: async (): Promise<ToolInfo[]> => [],
    callTool: async (name, args) =>
      guard(app.callServerTool({ name, arguments: args })) as ReturnType<DataSource['callTool']>,
    onStartAt(listener) {
      starts.add(listener);
      if (startAt !== undefined) listener(startAt);
    },
    async pick(resources) {
      const links = resources.map((r) => ({
        type: 'resource_link' as const,
        uri: r.uri,
        name: r.name,
        ...definedProps({ title: r.title, mimeType: r.mimeType, size: r.size }),
      }));
      await guard(app.updateModelContext({ content: links }));
    },
  };
}
