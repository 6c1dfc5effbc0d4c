/**
 * The skills extension's methods (`io.modelcontextprotocol/skills`, SEP-2640) and
 * `resources/directory/read`, as request handlers on Reservoir's low-level SDK server. The
 * catalogs are built by the SDK (see skills/live-catalog.ts); the SDK's `SkillsExtension.attach` needs
 * the high-level McpServer, whose resource registry would replace Reservoir's, so the methods are
 * installed here with the SDK's method names and result shapes, through the same guard, registry
 * access rules and sealed cursors as every other route.
 */
import {
  DIRECTORY_MIME_TYPE,
  RESOURCES_DIRECTORY_READ_METHOD,
  SKILLS_EXTENSION_ID,
  SKILLS_GET_METHOD,
  SKILLS_LIST_METHOD,
  type Skill,
} from '@modelcontextprotocol/server/ext/skills';
import type { CacheHint, McpRequestContext, Server } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { InvalidArgumentError } from '../core/errors.js';
import type { Principal } from '../core/principal.js';
import type { Registry } from '../core/registry.js';
import type { CallContext, DirectoryEntry } from '../core/types.js';
import { parseUri } from '../core/uri.js';
import type { SkillsProvider } from '../skills/provider.js';
import { guarded, type Guard } from './guarded-call.js';
import { definedProps } from '../core/defined.js';

export { SKILLS_EXTENSION_ID };

/** What the factory needs to serve skills: the mounted catalogs, in order, and the page size. */
export interface SkillsServing {
  providers: readonly SkillsProvider[];
  /** Skills per `skills/list` page and children per directory page. @default 100 */
  pageSize?: number | undefined;
}

/** Skills one `skills/list` page may examine, per skill it may return. */
const SCAN_FACTOR = 8;

const UriParams = z.looseObject({ uri: z.string(), cursor: z.string().optional() });
const CursorParams = z.looseObject({ cursor: z.string().optional() });

/** The capability entry: declared only when skills are served. */
export function skillsCapability(): Record<string, Record<string, boolean>> {
  return { [SKILLS_EXTENSION_ID]: { directoryRead: true } };
}

/** `resources/directory/read`: any source with directory reads (files, git trees, skills). */
export function installDirectoryHandler(
  server: Server,
  ctx: McpRequestContext,
  registry: Registry,
  guard: Guard,
  hint: CacheHint,
  pageSize: number,
): void {
  // The cache hint's fields go out together, to 2026-era clients only.
  const cache = ctx.era === 'modern' ? hint : {};
  server.setRequestHandler(
    RESOURCES_DIRECTORY_READ_METHOD,
    { params: UriParams },
    (params, handlerCtx) =>
      guarded(guard, handlerCtx, RESOURCES_DIRECTORY_READ_METHOD, params.uri, async (call) => {
        const page = await registry.readDirectory(params.uri, params.cursor, call, {
          limit: pageSize,
        });
        return {
          resources: page.items.map(describeChild),
          ...definedProps({ nextCursor: page.nextCursor }),
          ...cache,
        };
      }),
  );
}

export function installSkillsHandlers(
  server: Server,
  ctx: McpRequestContext,
  registry: Registry,
  guard: Guard,
  skills: SkillsServing,
  hint: CacheHint,
): void {
  const pageSize = skills.pageSize ?? 100;
  const cache = ctx.era === 'modern' ? hint : {};

  server.setRequestHandler(SKILLS_LIST_METHOD, { params: CursorParams }, (params, handlerCtx) =>
    guarded(guard, handlerCtx, SKILLS_LIST_METHOD, undefined, async (call) => {
      const all = allSkills(skills.providers);
      const after =
        params.cursor === undefined
          ? undefined
          : registry.openPosition(params.cursor, 'skills', call.principal);
      let index = 0;
      if (after !== undefined) while (index < all.length && all[index]!.uri <= after) index += 1;
      const page: Skill[] = [];
      // A page examines a bounded number of skills (rules may hide most): it can come back short,
      // even empty, with a cursor after the last skill examined.
      const budget = pageSize * SCAN_FACTOR;
      let examined = 0;
      for (
        ;
        index < all.length && page.length < pageSize && examined < budget;
        index += 1, examined += 1
      ) {
        const skill = all[index]!;
        if (await visible(registry, call.principal, skill.uri, call))
          page.push(readableFiles(registry, call.principal, skill));
      }
      const more = index < all.length;
      return {
        skills: page,
        ...definedProps({
          nextCursor: more
            ? registry.sealPosition('skills', all[index - 1]!.uri, call.principal)
            : undefined,
        }),
        ...cache,
      };
    }),
  );

  server.setRequestHandler(SKILLS_GET_METHOD, { params: UriParams }, (params, handlerCtx) =>
    guarded(guard, handlerCtx, SKILLS_GET_METHOD, params.uri, async (call) => {
      const href = parseUri(params.uri).href;
      const provider = skills.providers.find((p) => registry.route(href) === p);
      const served =
        provider === undefined
          ? undefined
          : await (async () => provider.canonical?.(href, call))().catch(() => undefined);
      const skill =
        typeof served === 'string' ? provider!.catalog.view.byUri.get(served) : undefined;
      // A skill the caller may not read is answered exactly like one that does not exist.
      if (skill === undefined || !(await visible(registry, call.principal, href, call))) {
        throw new InvalidArgumentError('uri', `no skill is served at ${params.uri}`, {
          uri: params.uri,
        });
      }
      return { skill: readableFiles(registry, call.principal, skill), ...cache };
    }),
  );
}

/** Every skill of every catalog, in URI order (catalog roots never overlap). */
function allSkills(providers: readonly SkillsProvider[]): readonly Skill[] {
  if (providers.length === 1) return providers[0]!.catalog.view.skills;
  return providers
    .flatMap((p) => p.catalog.view.skills)
    .sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
}

function visible(
  registry: Registry,
  principal: Principal | undefined,
  uri: string,
  call: CallContext,
): Promise<boolean> {
  return registry.restricted
    ? registry.access.admits(principal, 'read', uri, call)
    : Promise.resolve(true);
}

/**
 * The skill as `principal` may see it: its `resources` only the files it may read. A file a rule
 * withholds is left out with its name, digest and size (no marker), as a directory read leaves it
 * out; the catalog's URIs are the served (canonical) ones, so the rules judge them as listed.
 */
function readableFiles(registry: Registry, principal: Principal | undefined, skill: Skill): Skill {
  if (!registry.restricted || skill.resources === 'dynamic') return skill;
  const resources = skill.resources.filter((file) =>
    registry.access.allows(principal, 'read', parseUri(file.uri).href),
  );
  return resources.length === skill.resources.length ? skill : { ...skill, resources };
}

function describeChild(entry: DirectoryEntry): Record<string, unknown> {
  const { uri, name, title, description, size } = entry;
  return {
    uri,
    name,
    ...definedProps({ title, description }),
    mimeType:
      entry.kind === 'directory'
        ? DIRECTORY_MIME_TYPE
        : (entry.mimeType ?? 'application/octet-stream'),
    ...definedProps({ size }),
  };
}
