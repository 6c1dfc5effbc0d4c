// The explorer's tool form over the schemas tools are offered with: an optional argument comes as
// `anyOf: [its schema, { type: 'null' }]` (strict hosts want every property required), and the form
// still converts it by its real type and leaves it out when empty.
import { describe, expect, it } from 'vitest';
import { argumentsOf } from '../../src/ui/forms.js';

const schema = {
  type: 'object',
  properties: {
    uri: { type: 'string' },
    limit: { description: 'How many.', anyOf: [{ type: 'integer', minimum: 1 }, { type: 'null' }] },
    cursor: { anyOf: [{ type: 'string' }, { type: 'null' }] },
  },
  required: ['uri', 'limit', 'cursor'],
};

describe('tool arguments from the form', () => {
  it('converts a nullable integer as an integer and leaves empty optional ones out', () => {
    expect(argumentsOf(schema, { uri: 'file:///a', limit: '10', cursor: '' })).toEqual({
      uri: 'file:///a',
      limit: 10,
    });
  });

  it('names a nullable number field that does not parse', () => {
    expect(() => argumentsOf(schema, { uri: 'x', limit: 'ten' })).toThrow('limit: not a number');
  });
});
