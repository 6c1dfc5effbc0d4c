// A prompt's argument may be called anything, `constructor` and `toString` too: through the built
// CLI with the real SDK client over stdio, such an argument the client leaves out is missing (a
// required one refused, an optional one empty). The arguments given were looked up as an object's
// keys, so a left-out `constructor` read as Object.prototype's function: a required one passed,
// and the message said "function Object() { [native code] }".
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProtocolError } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup, connectStdio, ERAS } from '../helpers/clients.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';

const CONFIG = `sources:
  - type: files
    root: served
prompts:
  - name: p
    arguments:
      - name: constructor
        required: true
      - name: toString
      - name: valueOf
    messages:
      - role: user
        text: "c=[{{constructor}}] t=[{{toString}}] v=[{{valueOf}}]"
`;

describe.each(ERAS)('prompt arguments named after Object.prototype members, %s era', (era) => {
  it('are missing when the client leaves them out', async () => {
    const cleanup = new Cleanup();
    try {
      await ensureBuilt();
      const dir = makeTempDir('reservoir-prompt-names-');
      cleanup.add(() => removeTree(dir));
      mkdirSync(join(dir, 'served'));
      writeFileSync(join(dir, 'reservoir.yaml'), CONFIG);
      const { client } = await connectStdio(
        era,
        [],
        ['--config', join(dir, 'reservoir.yaml')],
        cleanup,
      );
      const refused = await client.getPrompt({ name: 'p', arguments: {} }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(ProtocolError);
      expect((refused as ProtocolError).message).toContain("required by prompt 'p'");
      const text = async (args: Record<string, string>): Promise<unknown> =>
        (await client.getPrompt({ name: 'p', arguments: args })).messages[0]!.content;
      expect(await text({ constructor: 'C' })).toEqual({
        type: 'text',
        text: 'c=[C] t=[] v=[]',
      });
      expect(await text({ constructor: 'C', toString: 'T', valueOf: 'V' })).toEqual({
        type: 'text',
        text: 'c=[C] t=[T] v=[V]',
      });
    } finally {
      await cleanup.run();
    }
  });
});
