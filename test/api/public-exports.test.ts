// The package's public API is the names src/index.ts exports, gathered by area from src/api/*.ts.
// This pins them: a name that goes missing (or appears) when exports move between the area modules
// fails here, values checked on the module as loaded and types read from the export statements.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/build.js';

const VALUES = [
  'ANONYMOUS_PRINCIPAL',
  'AccessPolicy',
  'BlobCaps',
  'BlobTooLargeError',
  'Catalog',
  'Cluster',
  'ConfigError',
  'DEFAULT_MAX_DOCUMENT_BYTES',
  'DEFAULT_MAX_READ_BYTES',
  'DEFAULT_MAX_RESPONSE_BYTES',
  'DEFAULT_PAGE_SIZE',
  'DEFAULT_SECRET_PATTERNS',
  'DocumentReads',
  'DocumentRenderer',
  'ERROR_CODES',
  'InvalidArgumentError',
  'InvalidCursorError',
  'InvalidUriError',
  'LOCAL_PRINCIPAL',
  'MAX_PAGE_SIZE',
  'MissingClientCapabilityError',
  'NotFoundError',
  'OPERATIONS',
  'OPERATION_CHANNEL',
  'Registry',
  'Reservoir',
  'ReservoirError',
  'TooLargeError',
  'UnavailableError',
  'buildSkills',
  'builtinTools',
  'createAuthenticator',
  'createCluster',
  'createLogger',
  'createReservoir',
  'createTracer',
  'definePrompt',
  'defineTool',
  'filesProvider',
  'generateToken',
  'gitProvider',
  'hashToken',
  'httpProvider',
  'inputRequired',
  'isInputRequired',
  'isReservoirError',
  's3Provider',
  'silentLogger',
  'sqlProvider',
  'sqlQueryTool',
  'whoAmITool',
];

const TYPES = [
  'Subscriptions',
  'AccessOptions',
  'AccessRule',
  'AuthOptions',
  'Authentication',
  'Authenticator',
  'BlobCapRule',
  'BlobContents',
  'BuiltinToolsOptions',
  'CallContext',
  'ClientCapabilities',
  'ClusterOptions',
  'CompiledTemplate',
  'Completer',
  'Completion',
  'ContentBlock',
  'DirectoryChild',
  'DirectoryEntry',
  'DirectoryPage',
  'DocumentRendererOptions',
  'ElicitationSchema',
  'ErrorCode',
  'ErrorData',
  'FilesOptions',
  'FilesProvider',
  'FindOptions',
  'GitOptions',
  'GitProvider',
  'HttpEndpoint',
  'HttpOptions',
  'HttpProvider',
  'HttpProviderOptions',
  'IdleMemoryOptions',
  'InputContext',
  'InputRequest',
  'InputRequired',
  'InputResponse',
  'LeaseOptions',
  'ListPage',
  'LogFn',
  'LogLevel',
  'Logger',
  'OAuthOptions',
  'Operation',
  'PolicyOptions',
  'Principal',
  'Prompt',
  'PromptArgument',
  'PromptContent',
  'PromptContext',
  'PromptDefinition',
  'PromptMessage',
  'Provider',
  'ProviderFactory',
  'ProviderPage',
  'ReadResult',
  'RedisOptions',
  'RegistryOptions',
  'RenderLimits',
  'RequestStateOptions',
  'ReservoirOptions',
  'ReservoirTracer',
  'ResourceContents',
  'ResourceInfo',
  'ResourceTemplate',
  'ResourceTemplateInfo',
  'S3Options',
  'S3Provider',
  'SamplingMessage',
  'SessionLimitOptions',
  'SkillsServing',
  'SkillsSettings',
  'SocketTimeouts',
  'SqlOptions',
  'SqlProvider',
  'StaticTokenOptions',
  'StdioHandle',
  'SubscriptionOptions',
  'SubscriptionStats',
  'TemplateEngine',
  'TemplateVariables',
  'TextContents',
  'TlsFiles',
  'TlsOptions',
  'TlsPolicy',
  'TlsVersion',
  'Tool',
  'ToolAnnotations',
  'ToolContext',
  'ToolLogLevel',
  'ToolResult',
  'WatchOptions',
];

/** The names `file` exports by `export { … }` / `export type { … }` statements, and those it re-exports with `export *`. */
function exportedNames(file: string): { values: string[]; types: string[] } {
  const text = readFileSync(join(REPO_ROOT, file), 'utf8');
  const values: string[] = [];
  const types: string[] = [];
  for (const [, typeOnly, list] of text.matchAll(/^export (type )?\{([^}]*)\}/gm)) {
    for (const entry of list!
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean)) {
      const inlineType = entry.startsWith('type ');
      const name = entry
        .replace(/^type /, '')
        .split(/\s+as\s+/)
        .at(-1)!;
      (typeOnly !== undefined || inlineType ? types : values).push(name);
    }
  }
  for (const [, target] of text.matchAll(/^export \* from '\.\/(.+)\.js';/gm)) {
    const inner = exportedNames(join(file, '..', `${target!}.ts`));
    values.push(...inner.values);
    types.push(...inner.types);
  }
  return { values, types };
}

describe('the public API (src/index.ts)', () => {
  const declared = exportedNames('src/index.ts');

  it('exports exactly the pinned values, each once', async () => {
    expect([...declared.values].sort()).toEqual([...VALUES].sort());
    const loaded = await import('../../src/index.js');
    expect(Object.keys(loaded).sort()).toEqual([...VALUES].sort());
  });

  it('exports exactly the pinned types, each once', () => {
    expect([...declared.types].sort()).toEqual([...TYPES].sort());
  });
});
