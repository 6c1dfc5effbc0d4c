/**
 * Imported before anything else: no code generation in the page (the CSP forbids eval). zod, which
 * the SDK client validates with, reads its global config from `globalThis.__zod_globalConfig` when
 * its first schemas are built (at import), and with `jitless` never probes `new Function`.
 */
const holder = globalThis as { __zod_globalConfig?: Record<string, unknown> };
holder.__zod_globalConfig = { ...holder.__zod_globalConfig, jitless: true };
