/**
 * The built-in tools, for hosts that call tools and never read resources themselves:
 * `list_resources`, `read_resource` and `find_resources`, each over the given registry, and
 * `search_resources` over the search index when one is given. All only read; their failures are `isError` results a model can act on.
 *
 * @example
 * ```ts
 * const reservoir = createReservoir({ providers: [filesProvider({ root: './docs' })] });
 * for (const tool of builtinTools(reservoir.registry)) reservoir.tools.add(tool);
 * ```
 */
import type { Registry } from '../core/registry.js';
import type { Tool } from '../core/tools.js';
import { findResourcesTool, type FindOptions } from './find-resources.js';
import { listResourcesTool } from './list-resources.js';
import { readResourceTool } from './read-resource.js';
import { searchResourcesTool, type SearchToolOptions } from './search-resources.js';

export interface BuiltinToolsOptions {
  /** Bounds on the work of one `find_resources` call. */
  find?: FindOptions;
  /** Offer `search_resources` over this index (see `Reservoir.search`). */
  search?: SearchToolOptions;
}

export function builtinTools(registry: Registry, options: BuiltinToolsOptions = {}): Tool[] {
  const tools = [
    listResourcesTool(registry),
    readResourceTool(registry),
    findResourcesTool(registry, options.find),
  ];
  if (options.search !== undefined) tools.push(searchResourcesTool(options.search));
  return tools;
}

export {
  listResourcesTool,
  LIST_RESOURCES,
  DEFAULT_LIST_LIMIT,
  MAX_LIST_LIMIT,
} from './list-resources.js';
export { readResourceTool, READ_RESOURCE, partialReadTemplate } from './read-resource.js';
export {
  findResourcesTool,
  FIND_RESOURCES,
  DEFAULT_FIND_LIMIT,
  MAX_FIND_LIMIT,
  DEFAULT_SCAN_LIMIT,
  DEFAULT_SCAN_TIME_MS,
  type FindOptions,
} from './find-resources.js';
export { whoAmITool, WHO_AM_I } from './who-am-i.js';
export {
  searchResourcesTool,
  linkOf,
  SEARCH_RESOURCES,
  DEFAULT_SEARCH_LIMIT,
  MAX_SEARCH_LIMIT,
  DEFAULT_FIRST_BUILD_WAIT_MS,
  type SearchToolOptions,
} from './search-resources.js';
