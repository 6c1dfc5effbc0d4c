// Bundles the CLI (dist/cli/index.js, as tsc emitted it) into one file with esbuild, so
// `reservoir serve` reads one module before its first answer instead of ~230 (zod alone is ~100).
// What the CLI imports lazily (other commands, providers, config schema, HTTP, cluster) becomes
// chunks beside it (dist/cli/chunk-*.js), still loaded only when asked for. Packages that are
// optional, native or required at run time stay external. The chunks sit in dist/cli/, the
// same depth as every other dist module, so `new URL('../../…', import.meta.url)` still resolves.
// Run by `npm run build` after tsc; the library entry (dist/index.js) is not touched.
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist/cli');
const staging = join(root, 'dist/.cli-bundle');

const EXTERNAL = [
  'better-sqlite3',
  'better-sqlite3-13',
  'pg',
  'mysql2',
  'pino',
  'pino-pretty',
  'ioredis',
  'yaml',
  'prom-client',
  'rate-limiter-flexible',
  'jose',
  '@aws-sdk/*',
  '@opentelemetry/*',
];

// zod's classic API re-exports every locale (`z.locales`, ~60 languages, a sixth of what `serve`
// would parse before its first answer). Nothing here or in the SDK uses them: zod registers its
// English messages itself (classic/schemas.js imports locales/en.js directly). So the locale index
// zod imports is replaced by one that offers English alone.
const ENGLISH_ONLY = {
  name: 'zod-english-only',
  setup(builder) {
    builder.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${join('node_modules', 'zod')}`)
        ? { path: resolve(args.resolveDir, '../locales'), namespace: 'zod-locales' }
        : undefined,
    );
    builder.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: "export { default as en } from './en.js';",
      resolveDir: args.path,
      loader: 'js',
    }));
  },
};

const BANNER =
  "import { createRequire as __reservoirRequire } from 'node:module'; const require = __reservoirRequire(import.meta.url);";

// Already bundled (tsc has not run since): bundling the bundle again would only churn the chunks.
if (readFileSync(join(cli, 'index.js'), 'utf8').includes(BANNER)) process.exit(0);

rmSync(staging, { recursive: true, force: true });

const { metafile } = await build({
  absWorkingDir: root,
  metafile: true,
  entryPoints: [{ in: join(cli, 'index.js'), out: 'index' }],
  outdir: staging,
  bundle: true,
  splitting: true,
  chunkNames: 'chunk-[hash]',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: EXTERNAL,
  plugins: [ENGLISH_ONLY],
  // CommonJS packages bundled into ESM call require() for Node's built-ins.
  banner: { js: BANNER },
  // Less text to parse at start-up. Identifiers are not minified, so names and stack traces still
  // read; and no `keepNames`: it wraps functions in a `__name` helper, and a function whose source
  // text is run elsewhere (providers/sql/sqlite-child.ts) would not find it.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  sourcemap: false,
  logLevel: 'warning',
});

// Which modules each output file holds (paths from the repository root), for the test that pins
// what `serve` loads before its first answer (test/api/startup-modules.test.ts). Not packed.
const holds = {};
for (const [output, { inputs }] of Object.entries(metafile.outputs))
  holds[basename(output)] = Object.keys(inputs);
writeFileSync(join(staging, 'bundle-modules.json'), `${JSON.stringify(holds, null, 1)}\n`);

// The previous build's chunks go only now that the new ones exist (the old index.js imported them).
for (const name of readdirSync(cli)) if (/^chunk-.*\.js$/.test(name)) rmSync(join(cli, name));
for (const name of readdirSync(staging)) renameSync(join(staging, name), join(cli, name));
rmSync(staging, { recursive: true, force: true });
