/**
 * The provider catalog: one row per source type, from the `type` a config writes to a lazy import
 * of the options that type accepts and a lazy import of what builds it. Every source — files, git,
 * SQL, HTTP, S3, a skills catalog's source, from the command line, the config file or a reload — is
 * built through these rows (src/server/sources.ts, src/server/skills.ts), and the config schema
 * (and so the JSON Schema) is generated from them. Nothing here imports a provider: a server loads
 * only the folders its sources name, so a files-only start loads no other provider, nor its drivers.
 *
 * Adding a source type = its folder (with `options.ts` for the zod schema and `source.ts` exporting
 * `build`) + one row here.
 */
import { z } from 'zod';
import type { SourceBuild } from './utils/source-build.js';

export type { BuiltSource, SkillsSourceBase, SourceBuild } from './utils/source-build.js';
import type { SkillsSourceBase } from './utils/source-build.js';

/** What a row's lazy import resolves to: its `build`, and `skillsBase` when skills may live there. */
export interface SourceModule {
  build: SourceBuild<never>;
  skillsBase?: SkillsSourceBase<never>;
}

/** The option schema a row's `options` import resolves to (without `type`, which the catalog adds). */
type OptionsSchema = z.ZodObject;

interface RowSettings<Skills extends boolean> {
  /** Fields that name paths, resolved against the config file's directory. */
  pathFields?: readonly string[];
  /** A skills catalog may be read from this type (its module exports `skillsBase`). */
  skills?: Skills;
}

function row<Type extends string, Schema extends OptionsSchema, Skills extends boolean = false>(
  type: Type,
  description: string,
  options: () => Promise<Schema>,
  load: () => Promise<SourceModule>,
  settings: RowSettings<Skills> = {},
) {
  return {
    type,
    description,
    options,
    load,
    pathFields: settings.pathFields ?? [],
    skills: (settings.skills ?? false) as Skills,
  };
}

/** Every source type, in the order the config's documentation lists them. `pathFields` resolve against the config file's directory. */
export const SOURCE_CATALOG = [
  row(
    'files',
    'A local directory tree served as file:// resources.',
    async () => (await import('./files/options.js')).filesSourceOptions,
    () => import('./files/source.js'),
    {
      pathFields: ['root'],
      skills: true,
    },
  ),
  row(
    'git',
    'A git repository served as git:// resources (see docs/providers/git.md).',
    async () => (await import('./git/options.js')).gitSourceOptions,
    () => import('./git/source.js'),
    {
      pathFields: ['path'],
      skills: true,
    },
  ),
  row(
    'http',
    'Upstream HTTP endpoints served as api:// resources (see docs/providers/http.md).',
    async () => (await import('./http/options.js')).httpSourceOptions,
    () => import('./http/source.js'),
  ),
  row(
    'sql',
    'A SQLite file or PostgreSQL database served as db:// resources (see docs/providers/sql.md).',
    async () => (await import('./sql/options.js')).sqlSourceOptions,
    () => import('./sql/source.js'),
    {
      pathFields: ['path'],
    },
  ),
  row(
    's3',
    'An S3 bucket (or S3-compatible store) served as s3:// resources (see docs/providers/s3.md).',
    async () => (await import('./s3/options.js')).s3SourceOptions,
    () => import('./s3/source.js'),
    {
      skills: true,
    },
  ),
] as const;

export type CatalogRow = (typeof SOURCE_CATALOG)[number];
export type SourceType = CatalogRow['type'];
/** The source types a skills catalog may be read from. */
export type SkillsSourceType = Extract<CatalogRow, { skills: true }>['type'];

type OptionsOf<Type extends SourceType> = Awaited<
  ReturnType<Extract<CatalogRow, { type: Type }>['options']>
>;
/** A source of one type as the config file holds it, validated. */
export type SourceConfigOf<Type extends SourceType> = { type: Type } & z.output<OptionsOf<Type>>;
/** A source of one type as a config file may write it. */
export type SourceInputOf<Type extends SourceType> = { type: Type } & z.input<OptionsOf<Type>>;
/** Any source, validated: a union over the rows. */
export type SourceConfig = { [Type in SourceType]: SourceConfigOf<Type> }[SourceType];
type SourceInput = { [Type in SourceType]: SourceInputOf<Type> }[SourceType];
/** A skills catalog's source, validated. */
export type SkillsSourceConfig = {
  [Type in SkillsSourceType]: SourceConfigOf<Type>;
}[SkillsSourceType];
type SkillsSourceInput = { [Type in SkillsSourceType]: SourceInputOf<Type> }[SkillsSourceType];

/** The row of a source type. */
export function catalogRow(type: string): CatalogRow {
  const found = SOURCE_CATALOG.find((entry) => entry.type === type);
  if (found === undefined) throw new Error(`unknown source type '${type}'`);
  return found;
}

/** A row's option schema with its `type` literal: one member of the union. */
async function tagged(entry: CatalogRow): Promise<OptionsSchema> {
  return (await entry.options()).safeExtend({
    type: z.literal(entry.type).meta({ description: entry.description }),
  });
}

async function unionOf<Output, Input>(
  rows: readonly CatalogRow[],
): Promise<z.ZodType<Output, Input>> {
  const members = await Promise.all(rows.map(tagged));
  return z.discriminatedUnion(
    'type',
    members as [OptionsSchema, ...OptionsSchema[]],
  ) as unknown as z.ZodType<Output, Input>;
}

/**
 * The config schema of one source: a union discriminated on `type`, generated from the rows. It
 * loads every row's options (never a provider), so only a config file's loader asks for it.
 */
export function sourceSchema(): Promise<z.ZodType<SourceConfig, SourceInput>> {
  return unionOf(SOURCE_CATALOG);
}

/** The schema of a skills catalog's `source`: the rows skills may be read from. */
export function skillsSourceSchema(): Promise<z.ZodType<SkillsSourceConfig, SkillsSourceInput>> {
  return unionOf(SOURCE_CATALOG.filter((entry) => entry.skills));
}

/** Loads a row's module: what builds a source of that type. */
export function sourceModule(type: string): Promise<SourceModule> {
  return catalogRow(type).load();
}
