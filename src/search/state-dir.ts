/**
 * The state directory: where Reservoir keeps what should survive a restart — the search index files
 * and the key that seals cursors (so a cursor printed by one run works in the next). By default the
 * platform's cache directory: $XDG_CACHE_HOME/reservoir or ~/.cache/reservoir on Linux,
 * ~/Library/Caches/reservoir on macOS, %LOCALAPPDATA%\reservoir on Windows.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

const KEY_FILE = 'cursor.key';
const KEY_BYTES = 32;

export function defaultStateDir(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string {
  if (platform === 'win32')
    return join(env.LOCALAPPDATA ?? join(homedir(), 'AppData', 'Local'), 'reservoir');
  if (platform === 'darwin') return join(homedir(), 'Library', 'Caches', 'reservoir');
  const xdg = env.XDG_CACHE_HOME;
  return join(
    xdg !== undefined && xdg.startsWith('/') ? xdg : join(homedir(), '.cache'),
    'reservoir',
  );
}

export function resolveStateDir(dir: string | undefined): string {
  return dir === undefined ? defaultStateDir() : resolve(dir);
}

/**
 * The cursor key kept in the state directory: read when present, else created — 32 random bytes in a
 * file readable by the owner only (0600), written under a temporary name and linked into place, so
 * two processes starting together agree on one key and nobody reads a half-written one.
 */
export function cursorKey(stateDir: string): Buffer {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const file = join(stateDir, KEY_FILE);
  const existing = readKey(file);
  if (existing !== undefined) return existing;
  const temporary = join(stateDir, `.${KEY_FILE}.${process.pid}.${randomBytes(6).toString('hex')}`);
  writeFileSync(temporary, randomBytes(KEY_BYTES), { mode: 0o600, flag: 'wx' });
  try {
    linkSync(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    rmSync(temporary, { force: true });
  }
  const key = readKey(file);
  if (key === undefined)
    throw new Error(
      `${file} does not hold a cursor key (${KEY_BYTES} bytes); delete it to have a new one made`,
    );
  return key;
}

function readKey(file: string): Buffer | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return bytes.length >= KEY_BYTES ? bytes : undefined;
}
