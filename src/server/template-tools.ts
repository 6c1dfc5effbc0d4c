/**
 * The tools made from resource templates (config `tools.fromTemplates`), kept in the tool catalog:
 * made once the sources are mounted, and made again after a reload changes the sources, so a tool
 * appears and goes with its template (one list change each time).
 */
import type { ToolsConfig } from '../config/tools.js';
import { sdkTemplateEngine } from '../mcp/templates.js';
import { definedProps } from '../core/defined.js';
import { templateTools } from '../tools/template-tools.js';
import type { Reservoir } from './index.js';

/** Adds the template tools; resolves with what makes them again (for the reloader). */
export async function offerTemplateTools(
  reservoir: Reservoir,
  options: ToolsConfig,
): Promise<() => Promise<void>> {
  let offered: string[] = [];
  const sync = async (): Promise<void> => {
    for (const name of offered) reservoir.tools.remove(name);
    const taken = reservoir.tools.all().map((tool) => tool.name);
    const tools = await templateTools(reservoir.registry, sdkTemplateEngine, {
      taken,
      ...definedProps({ maxEnum: options.maxEnum }),
    });
    for (const tool of tools) reservoir.tools.add(tool);
    offered = tools.map((tool) => tool.name);
  };
  await sync();
  return sync;
}
