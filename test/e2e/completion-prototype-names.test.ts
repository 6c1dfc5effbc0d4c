// An argument's name in `completion/complete` is the client's: a name that is a member of
// Object.prototype (`constructor`, `toString`, `__proto__`…) is an argument no template has, and is
// answered as one (no values), not with an internal error from calling what the prototype holds.
import { describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup, connectStdio, ERAS } from '../helpers/clients.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';

const PROTOTYPE_NAMES = [
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'isPrototypeOf',
];
const NONE = { values: [], total: 0, hasMore: false };

describe.each(ERAS)(
  'completion of arguments named after Object.prototype members, %s era',
  (era) => {
    it('answers no values over stdio, for every template, as for any name no template has', async () => {
      const cleanup = new Cleanup();
      try {
        await ensureBuilt();
        const root = makeTempDir();
        cleanup.add(() => removeTree(root));
        writeTree(root, { 'readme.md': '# readme\n' });
        const { client } = await connectStdio(era, [root], [], cleanup);
        const { resourceTemplates } = await client.listResourceTemplates();
        expect(resourceTemplates.length).toBeGreaterThan(0);
        for (const { uriTemplate } of resourceTemplates) {
          const ref = { type: 'ref/resource' as const, uri: uriTemplate };
          const unknown = await client.complete({ ref, argument: { name: 'nosuch', value: '' } });
          expect(unknown.completion).toEqual(NONE);
          for (const name of PROTOTYPE_NAMES) {
            const answer = await client.complete({ ref, argument: { name, value: '' } });
            expect(answer.completion, `${uriTemplate} ${name}`).toEqual(NONE);
          }
          // the template's own argument still completes
          const path = await client.complete({ ref, argument: { name: 'path', value: 're' } });
          expect(path.completion.values, uriTemplate).toEqual(['readme.md']);
        }
      } finally {
        await cleanup.run();
      }
    });
  },
);
