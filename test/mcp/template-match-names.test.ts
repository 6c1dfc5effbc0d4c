// A template's variable names are its author's: one called `__proto__` is a variable like any other
// when a URI is matched, not the prototype of the variables the match returns.
import { describe, expect, it } from 'vitest';
import { sdkTemplateEngine } from '../../src/mcp/templates.js';

describe('matching a template whose variables are named after Object.prototype members', () => {
  it('returns __proto__, constructor and toString as own variables', () => {
    const compiled = sdkTemplateEngine.compile('x://h/{__proto__}/{constructor}{?toString}');
    const vars = compiled.match('x://h/a/b?toString=c');
    expect(vars).not.toBeNull();
    expect(Object.keys(vars!).sort()).toEqual(['__proto__', 'constructor', 'toString']);
    expect(Object.getOwnPropertyDescriptor(vars, '__proto__')?.value).toBe('a');
    expect(vars!['constructor']).toBe('b');
    expect(vars!['toString']).toBe('c');
    expect(compiled.expand!(vars!)).toBe('x://h/a/b?toString=c');
  });

  it('expands a variable left out as absent, not as what Object.prototype holds under its name', () => {
    const compiled = sdkTemplateEngine.compile('x://h/{toString}{?valueOf}');
    expect(compiled.expand!({})).toBe('x://h/');
    expect(compiled.expand!({ valueOf: 'v' })).toBe('x://h/?valueOf=v');
  });
});
