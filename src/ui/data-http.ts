/**
 * The explorer as an ordinary MCP client of this server's own /mcp, in the 2026-07-28 era, through
 * the SDK v2 client's browser build. The bearer token (when the server wants one) travels in the
 * Authorization header only; it is kept in sessionStorage by the page, never in a URL or cookie.
 */
import {
  Client,
  ProtocolError,
  StreamableHTTPClientTransport,
  type McpSubscription,
} from '@modelcontextprotocol/client';
import {
  DataError,
  type CompletionRef,
  type DataSource,
  type Live,
  type LiveHandlers,
  type PromptInfo,
  type Resource,
  type Template,
  type ToolInfo,
} from './data';

const MODERN = '2026-07-28';
const CLIENT_INFO = { name: 'reservoir-explorer', version: '1.0.0' };

export async function connectHttp(endpoint: URL, token: string | undefined): Promise<DataSource> {
  const headers: Record<string, string> =
    token === undefined || token === '' ? {} : { authorization: `Bearer ${token}` };
  const newClient = (): Client =>
    new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: MODERN } } });
  const client = newClient();
  await guard(
    client.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers } })),
  );
  // server/discover proves the token before the page shows anything.
  await guard(client.listTools());

  const all = async <T>(
    fetchPage: (cursor?: string) => Promise<{ items: T[]; nextCursor?: string | undefined }>,
  ): Promise<T[]> => {
    const items: T[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 100; pages += 1) {
      const page = await fetchPage(cursor);
      items.push(...page.items);
      cursor = page.nextCursor;
      if (cursor === undefined) break;
    }
    return items;
  };

  return {
    kind: 'http',
    server: () => client.getServerVersion(),
    async listResources(cursor) {
      const page = await guard(
        client.request({
          method: 'resources/list',
          params: cursor === undefined ? {} : { cursor },
        }),
      );
      return { resources: page.resources as Resource[], nextCursor: page.nextCursor };
    },
    async readResource(uri) {
      return guard(client.readResource({ uri }));
    },
    async listTools() {
      return all(async (cursor) => {
        const page = await guard(client.listTools(cursor === undefined ? {} : { cursor }));
        return { items: page.tools as ToolInfo[], nextCursor: page.nextCursor };
      });
    },
    async callTool(name, args) {
      return guard(client.callTool({ name, arguments: args })) as ReturnType<
        DataSource['callTool']
      >;
    },
    async listTemplates() {
      return all(async (cursor) => {
        const page = await guard(
          client.listResourceTemplates(cursor === undefined ? {} : { cursor }),
        );
        return { items: page.resourceTemplates as Template[], nextCursor: page.nextCursor };
      });
    },
    async listPrompts() {
      return all(async (cursor) => {
        const page = await guard(client.listPrompts(cursor === undefined ? {} : { cursor }));
        return { items: page.prompts as PromptInfo[], nextCursor: page.nextCursor };
      });
    },
    async getPrompt(name, args) {
      return guard(client.getPrompt({ name, arguments: args })) as ReturnType<
        NonNullable<DataSource['getPrompt']>
      >;
    },
    async complete(ref: CompletionRef, argument, value, context) {
      const answer = await guard(
        client.complete({
          ref,
          argument: { name: argument, value },
          context: { arguments: context },
        }),
      );
      return answer.completion.values;
    },
    live(handlers: LiveHandlers): Live {
      client.setNotificationHandler('notifications/resources/updated', (notification) =>
        handlers.updated(notification.params.uri),
      );
      client.setNotificationHandler('notifications/resources/list_changed', () =>
        handlers.listChanged(),
      );
      let current: McpSubscription | undefined;
      let generation = 0;
      return {
        async watch(uris, list) {
          const mine = (generation += 1);
          const previous = current;
          current = undefined;
          await previous?.close().catch(() => undefined);
          if (uris.length === 0 && !list) return;
          const subscription = await client.listen({
            resourceSubscriptions: uris,
            resourcesListChanged: list,
          });
          if (mine !== generation) await subscription.close().catch(() => undefined);
          else current = subscription;
        },
        async close() {
          generation += 1;
          await current?.close().catch(() => undefined);
          current = undefined;
        },
      };
    },
  };
}

/** Turns transport and protocol failures into errors the page can explain. */
async function guard<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    throw explain(error);
  }
}

function explain(error: unknown): DataError {
  const message = error instanceof Error ? error.message : String(error);
  const status =
    (error as { status?: unknown; data?: { status?: unknown } }).status ??
    (error as { data?: { status?: unknown } }).data?.status;
  if (status === 401 || /\b401\b|unauthori[sz]ed/i.test(message))
    return new DataError('This server needs a token.', 'unauthorized');
  if (status === 403 || /\b403\b|forbidden|insufficient/i.test(message))
    return new DataError('This token may not do that.', 'forbidden');
  if (error instanceof ProtocolError) {
    const data = error.data as { limit?: unknown } | undefined;
    if (error.code === -32602 && /not found/i.test(message))
      return new DataError(message, 'not_found', error.data);
    if (data?.limit !== undefined) return new DataError(message, 'too_large', error.data);
    return new DataError(message, 'other', error.data);
  }
  return new DataError(message, 'other');
}
