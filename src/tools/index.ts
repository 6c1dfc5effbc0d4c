/**
 * The built-in tools, for hosts that call tools and never read resources themselves:
 * `list_resources`, `read_resource` and `find_resources`, each over the given registry. All three
 * only read; their failures are `isError` results a model can act on.
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

export interface BuiltinToolsOptions {
  /** Bounds on the work of one `find_resources` call. */
  find?: FindOptions;
}

export function builtinTools(registry: Registry, options: BuiltinToolsOptions = {}): Tool[] {
  return [listResourcesTool(registry), readResourceTool(registry), findResourcesTool(registry, options.find)];
}

export { listResourcesTool, LIST_RESOURCES, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from './list-resources.js';
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
