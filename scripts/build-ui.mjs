// Builds the explorer (src/ui) into dist/ui/: app.js + app.css + index.html + favicon.svg for
// `/ui/`, and app.html — the same bundle with script and style inlined — for the MCP App resource
// (a host renders that in a sandboxed frame that cannot fetch our files). Run by `npm run build`.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'src/ui');
const out = join(root, 'dist/ui');
mkdirSync(out, { recursive: true });

await build({
  entryPoints: [
    { in: join(source, 'main.tsx'), out: 'app' },
    { in: join(source, 'styles.css'), out: 'app' },
  ],
  outdir: out,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['chrome110', 'firefox110', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  minify: true,
  legalComments: 'none',
  sourcemap: false,
  define: { 'process.env.NODE_ENV': '"production"' },
  logLevel: 'warning',
  tsconfig: join(source, 'tsconfig.json'),
});
copyFileSync(join(source, 'index.html'), join(out, 'index.html'));
copyFileSync(join(source, 'favicon.svg'), join(out, 'favicon.svg'));

const js = readFileSync(join(out, 'app.js'), 'utf8');
const css = readFileSync(join(out, 'app.css'), 'utf8');
// Inside <script>, the only sequence that could end the element early is `</script` (any case).
const inlineJs = js.replace(/<\/(script)/gi, '<\\/$1');
const inlineCss = css.replace(/<\/(style)/gi, '<\\/$1');
const app = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark"><meta name="reservoir-mode" content="app"><title>Reservoir explorer</title>
<style>${inlineCss}</style></head><body><div id="root"></div><script type="module">${inlineJs}</script></body></html>
`;
writeFileSync(join(out, 'app.html'), app);

const gz = (text) => gzipSync(Buffer.from(text)).length;
const sizes = {
  js: js.length,
  css: css.length,
  gzipped: gz(js) + gz(css) + gz(readFileSync(join(out, 'index.html'))),
};
writeFileSync(join(out, 'sizes.json'), `${JSON.stringify(sizes)}\n`);
