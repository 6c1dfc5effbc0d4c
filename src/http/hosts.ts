/**
 * Which host names the endpoint answers to (the DNS-rebinding checks on `Host` and `Origin`), and
 * which bind addresses are loopback (served without authentication) or wildcards.
 */
import { localhostAllowedHostnames } from '@modelcontextprotocol/server';

export function isLoopback(host: string): boolean {
  return (
    host === 'localhost' ||
    host === '::1' ||
    host === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
  );
}

export function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '[::]';
}

/** Localhost names always; the bound address when it is a specific one; plus what the user lists. */
export function allowedHostnames(host: string, extra: string[]): string[] {
  const names = new Set(localhostAllowedHostnames());
  if (!isWildcard(host))
    names.add(host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);
  for (const name of extra) names.add(name.toLowerCase());
  return [...names];
}
