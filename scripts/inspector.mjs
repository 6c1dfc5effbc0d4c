// The MCP Inspector CLI, installed on demand into .cache/inspector from scripts/inspector/ (its
// package.json pins the version, its package-lock.json every dependency). It is kept out of the
// project's own devDependencies on purpose: ~110 MB and 120 packages (vite, react, ink, its own
// copy of the MCP SDK), and `engines: node >= 22.19`, which the project's Node 20 would warn about
// on every `npm ci`. Only the test that uses it pays for it, once per checkout.
//
//   import { ensureInspector } from './inspector.mjs';
//   const { node, cli } = await ensureInspector();   // run: node cli --cli <command…> --method …
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureNode22 } from './node-release.mjs';
import { ensurePinned } from './pinned-package.mjs';

const PACKAGE = '@modelcontextprotocol/inspector';

/** Resolves with a Node >= 22.19 binary and the Inspector's launcher script, installing them if needed. */
export async function ensureInspector({ log = () => {} } = {}) {
  const node = await ensureNode22({ log });
  // No install scripts: the package's postinstall only sets up a source checkout.
  const { dir, version } = await ensurePinned('inspector', PACKAGE, { log });
  return {
    node,
    cli: join(dir, 'node_modules', PACKAGE, 'clients', 'launcher', 'build', 'index.js'),
    version,
  };
}

// Run directly, it installs what is missing and prints `{ node, cli, version }` as JSON; it exits 3
// when no Node >= 22.19 binary can be obtained (the one case the Inspector test may skip).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  let node;
  try {
    node = await ensureNode22({ log: (message) => console.error(message) });
  } catch (error) {
    console.error(
      `no Node >= 22.19 binary: ${error instanceof Error ? error.message : String(error)}`,
    );
    process.exit(3);
  }
  const found = await ensureInspector({ log: (message) => console.error(message) });
  console.log(JSON.stringify({ ...found, node }));
}
