/**
 * The parts of config handling that every command needs whether or not a config file exists: the
 * default file name, the error a bad file throws, and the rule that sources must not overlap. They
 * live apart from load.ts so that serving without a config file never loads the config schema.
 */
import { ReservoirError } from '../core/errors.js';

/** The file Reservoir looks for in the working directory when no --config is given. */
export const DEFAULT_CONFIG_FILE = 'reservoir.yaml';

/** Every name found in the working directory without --config, in the order they are named in messages. */
export const DEFAULT_CONFIG_FILES = ['reservoir.yaml', 'reservoir.yml', 'reservoir.json'] as const;

/** A config file that cannot be used: every problem, one per line of the message. */
export class ConfigFileError extends ReservoirError {
  readonly problems: readonly string[];

  constructor(file: string, problems: readonly string[]) {
    super('config_invalid', problems.join('\n'), { data: { file, problems } });
    this.name = 'ConfigFileError';
    this.problems = problems;
  }
}

/** Whether two canonical directories are the same or one holds the other. */
export function overlaps(a: string, b: string): boolean {
  const withSlash = (p: string): string => (p.endsWith('/') ? p : `${p}/`);
  return withSlash(a).startsWith(withSlash(b)) || withSlash(b).startsWith(withSlash(a));
}
