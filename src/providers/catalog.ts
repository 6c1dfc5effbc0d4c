/**
 * The provider catalog: one row per source type, from the `type` a config writes to the options
 * that type accepts and a lazy import of what builds it. The config schema (and so the JSON
 * Schema) is generated from these rows, and every source — from the CLI, the config file or a
 * reload — is built through them (src/server/sources.ts). A server never loads a provider its
 * config does not name, nor that provider's drivers.
 *
 * Adding a source type = its folder (with `options.ts` for the zod schema and `source.ts` exporting
 * `build`) + one row here.
 */
import { z } from 'zod';
import { filesSourceOptions } from './files/options.js';
import { gitSourceOptions } from './git/options.js';
import { httpSourceOptions } from './http/options.js';
import { s3SourceOptions } from './s3/options.js';
import { sqlSourceOptions } from './sql/options.js';
import type { SourceBuild } from './utils/source-build.js';

export type { BuiltSource, SourceBuild } from './utils/source-build.js';

/** What a row's lazy import resolves to. */
export interface SourceModule {
  build: SourceBuild<never>;
}

function row<Type extends string, Schema extends z.ZodType>(type: Type, schema: Schema, load: () => Promise<SourceModule>, pathFields: readonly string[] = []) {
  return { type, schema, load, pathFields };
}

const typed = <Type extends string>(type: Type, description: string) => ({ type: z.literal(type).meta({ description }) });

/** Every source type, in the order the config's documentation lists them. `pathFields` resolve against the config file's directory. */
export const SOURCE_CATALOG = [
  row('files', filesSourceOptions.safeExtend(typed('files', 'A local directory tree served as file:// resources.')), () => import('./files/source.js')),
  row('git', gitSourceOptions.safeExtend(typed('git', 'A git repository served as git:// resources (see docs/providers/git.md).')), () => import('./git/source.js'), ['path']),
  row('http', httpSourceOptions.safeExtend(typed('http', 'Upstream HTTP endpoints served as api:// resources (see docs/providers/http.md).')), () => import('./http/source.js')),
  row('sql', sqlSourceOptions.safeExtend(typed('sql', 'A SQLite file or PostgreSQL database served as db:// resources (see docs/providers/sql.md).')), () => import('./sql/source.js'), ['path']),
  row('s3', s3SourceOptions.safeExtend(typed('s3', 'An S3 bucket (or S3-compatible store) served as s3:// resources (see docs/providers/s3.md).')), () => import('./s3/source.js')),
] as const;

export type CatalogRow = (typeof SOURCE_CATALOG)[number];
export type SourceType = CatalogRow['type'];

/** The row of a source type. */
export function catalogRow(type: string): CatalogRow {
  const found = SOURCE_CATALOG.find((entry) => entry.type === type);
  if (found === undefined) throw new Error(`unknown source type '${type}'`);
  return found;
}

/** The config schema of one source: a union discriminated on `type`, generated from the rows. */
export function sourceSchema() {
  const [files, git, http, sql, s3] = SOURCE_CATALOG;
  return z.discriminatedUnion('type', [files.schema, git.schema, http.schema, sql.schema, s3.schema]);
}
