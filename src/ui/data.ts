/**
 * The page's one door to the server. Everything the explorer shows comes through this interface;
 * two implementations exist: over HTTP as an ordinary MCP client of the server's own /mcp
 * (data-http.ts), and inside a host through the MCP App bridge (data-app.ts). A capability an
 * implementation lacks is simply absent, and the page hides what needs it.
 */

export interface Resource {
  uri: string;
  name: string;
  title?: string | undefined;
  mimeType?: string | undefined;
  size?: number | undefined;
  annotations?: {
    lastModified?: string | undefined;
    priority?: number | undefined;
    audience?: string[] | undefined;
  };
  icons?: Icon[] | undefined;
}

export interface Icon {
  src: string;
  mimeType?: string | undefined;
  theme?: 'light' | 'dark' | undefined;
}

export interface Contents {
  uri: string;
  mimeType?: string | undefined;
  text?: string | undefined;
  blob?: string | undefined;
}

export interface ReadAnswer {
  contents: Contents[];
  ttlMs?: number | undefined;
  cacheScope?: string | undefined;
}

export interface Template {
  uriTemplate: string;
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  mimeType?: string | undefined;
}

export interface ToolInfo {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema | undefined;
  icons?: Icon[] | undefined;
}

export interface JsonSchema {
  type?: string | string[] | undefined;
  properties?: Record<string, JsonSchema> | undefined;
  required?: string[] | undefined;
  description?: string | undefined;
  enum?: unknown[] | undefined;
  items?: JsonSchema | undefined;
  /** An optional argument is offered as `anyOf: [its schema, { type: 'null' }]` (strict hosts want every property required). */
  anyOf?: JsonSchema[] | undefined;
  default?: unknown;
  minimum?: number | undefined;
  maximum?: number | undefined;
}

export interface PromptInfo {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  arguments?: {
    name: string;
    title?: string | undefined;
    description?: string | undefined;
    required?: boolean | undefined;
  }[];
}

export interface PromptMessage {
  role: string;
  content: {
    type: string;
    text?: string | undefined;
    resource?: Contents | undefined;
    uri?: string | undefined;
    name?: string | undefined;
    mimeType?: string | undefined;
    data?: string | undefined;
  };
}

export interface ToolAnswer {
  content: {
    type: string;
    text?: string | undefined;
    uri?: string | undefined;
    name?: string | undefined;
    resource?: Contents | undefined;
  }[];
  structuredContent?: Record<string, unknown> | undefined;
  isError?: boolean | undefined;
}

export type CompletionRef =
  { type: 'ref/resource'; uri: string } | { type: 'ref/prompt'; name: string };

export interface ServerInfo {
  name: string;
  version: string;
  title?: string | undefined;
  icons?: Icon[] | undefined;
}

export interface Live {
  /** Watches exactly these URIs (and the list when `list`); replaces what was watched before. */
  watch(uris: string[], list: boolean): Promise<void>;
  close(): Promise<void>;
}

export interface LiveHandlers {
  updated(uri: string): void;
  listChanged(): void;
}

export interface DataSource {
  readonly kind: 'http' | 'app';
  server(): ServerInfo | undefined;
  listResources(
    cursor?: string,
  ): Promise<{ resources: Resource[]; nextCursor?: string | undefined }>;
  readResource(uri: string): Promise<ReadAnswer>;
  listTools(): Promise<ToolInfo[]>;
  callTool(name: string, args: Record<string, unknown>): Promise<ToolAnswer>;
  listTemplates?(): Promise<Template[]>;
  listPrompts?(): Promise<PromptInfo[]>;
  getPrompt?(
    name: string,
    args: Record<string, string>,
  ): Promise<{ description?: string; messages: PromptMessage[] }>;
  complete?(
    ref: CompletionRef,
    argument: string,
    value: string,
    context: Record<string, string>,
  ): Promise<string[]>;
  live?(handlers: LiveHandlers): Live;
  /** Inside a host: calls `listener` with the `under` argument `open_explorer` was called with. */
  onStartAt?(listener: (uri: string) => void): void;
  /** Inside a host: hands the chosen resources back as resource links. */
  pick?(resources: Resource[]): Promise<void>;
}

/** A failure the page can explain: `unauthorized` asks for a token. */
export class DataError extends Error {
  constructor(
    message: string,
    readonly kind: 'unauthorized' | 'forbidden' | 'not_found' | 'too_large' | 'other',
    readonly data?: unknown,
  ) {
    super(message);
  }
}
