// A template tool's input schema has one property per variable, whatever the variable is called:
// the schema was built by assigning into plain objects (the zod shape, then the portable JSON
// Schema's `properties`), where a variable `__proto__` set the prototype and vanished from the
// tool. The config refuses that name (no MCP client can pass it: the SDK drops it too), but a
// provider's own template may still have it, and `constructor` is a name like any other. Likewise a
// named query's parameters as a read shows them back.
import { describe, expect, it } from 'vitest';
import type { Registry } from '../../src/core/registry.js';
import { toolSchemas } from '../../src/core/tools.js';
import type { ResourceTemplateInfo } from '../../src/core/types.js';
import { sdkTemplateEngine } from '../../src/mcp/templates.js';
import { bindParameters } from '../../src/providers/sql/params.js';
import { templateTools } from '../../src/tools/template-tools.js';

/** A registry with these templates and access rules in force (so no completion is asked for). */
function registryOf(templates: ResourceTemplateInfo[]): Registry {
  return {
    restricted: true,
    listTemplates: () => ({ items: templates }),
  } as unknown as Registry;
}

describe('a template tool made from variables named after the object model', () => {
  it('lists every variable as an own property of its input schema, required or nullable', async () => {
    const registry = registryOf([
      { uriTemplate: 'x://a/{__proto__}/{constructor}{?prototype}', name: 'thing' },
    ]);
    const [tool] = await templateTools(registry, sdkTemplateEngine);
    const schema = toolSchemas(tool!).inputSchema;
    const properties = schema['properties'] as Record<string, unknown>;
    expect(Object.getPrototypeOf(properties)).toBe(Object.prototype);
    expect(Object.keys(properties)).toEqual(['__proto__', 'constructor', 'prototype']);
    expect(schema['required']).toEqual(['__proto__', 'constructor', 'prototype']);
    // What goes on the wire: the property itself, not an empty `properties`.
    expect(JSON.stringify(properties)).toBe(
      '{"__proto__":{"type":"string","description":"The __proto__ variable of the template."},' +
        '"constructor":{"type":"string","description":"The constructor variable of the template."},' +
        '"prototype":{"description":"The prototype variable of the template. Optional: null (or \\"\\") leaves it out.",' +
        '"anyOf":[{"type":"string"},{"type":"null"}]}}',
    );
  });
});

describe("a named query's parameters as a read shows them", () => {
  it('keeps a parameter called __proto__ beside the others', () => {
    const { values, shown } = bindParameters(
      'echo',
      { sql: 'SELECT ?, ?', params: [{ name: '__proto__' }, { name: 'constructor' }] },
      new Map([
        ['__proto__', 'P'],
        ['constructor', 'C'],
      ]),
    );
    expect(values).toEqual(['P', 'C']);
    expect(JSON.stringify(shown)).toBe('{"__proto__":"P","constructor":"C"}');
  });
});
