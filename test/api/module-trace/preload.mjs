// Preloaded with `node --import` (see ../module-trace.ts): records, one per line in the file named
// by RESERVOIR_MODULE_TRACE, every module the ESM loader resolves (from a loader hook, as it
// happens) and, when the process exits, every CommonJS module in the require cache, then `exit`.
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';

const file = process.env.RESERVOIR_MODULE_TRACE;
if (file === undefined || file === '')
  throw new Error('module-trace/preload.mjs: set RESERVOIR_MODULE_TRACE to the trace file');
register(new URL('./hooks.mjs', import.meta.url), { data: { file } });
const cache = createRequire(import.meta.url).cache;
process.on('exit', () =>
  appendFileSync(
    file,
    `${Object.keys(cache)
      .map((path) => `${path}\n`)
      .join('')}exit\n`,
  ),
);
