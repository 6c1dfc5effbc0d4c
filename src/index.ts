/**
 * Reservoir's public library API. Named exports only; everything else is internal.
 *
 * @example
 * ```ts
 * import { createReservoir, filesProvider } from 'mcp-reservoir';
 *
 * const reservoir = createReservoir({ providers: [filesProvider({ root: './docs' })] });
 * const endpoint = await reservoir.listen({ port: 7337 }); // http://127.0.0.1:7337/mcp
 * // …or: reservoir.serveStdio();
 * ```
 */

// The public API by area; each module lists its named exports with their documentation, and
// test/api/public-exports.test.ts pins the whole list.
export * from './api/reservoir-server.js';
export * from './api/source-providers.js';
export * from './api/resource-model.js';
export * from './api/prompts-and-tools.js';
export * from './api/access-and-auth.js';
