/**
 * Which upstream addresses may be connected to. Unless a source allows private networks, every
 * address that is not public — loopback, private, link-local (cloud metadata at 169.254.169.254),
 * unique-local, unspecified, shared (CGNAT), multicast, reserved — is refused, including IPv6 forms
 * that embed an IPv4 address (`::ffff:127.0.0.1`, `::127.0.0.1`, `64:ff9b::7f00:1`).
 *
 * The check runs where the connection is made: `guardedLookup` is the DNS `lookup` of the provider's
 * HTTP agents, so the address checked is the address connected to (no window between a check and
 * the connection for DNS rebinding). IP-literal hosts, which Node connects to without a lookup,
 * are checked by `checkLiteralHost` — they cannot change between the check and the connection.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** Named non-public ranges; the name is reported when an address is refused. */
const RANGES: readonly [string, number, 'ipv4' | 'ipv6', string][] = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'shared (CGNAT)'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'reserved'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'reserved'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['fc00::', 7, 'ipv6', 'unique-local (private)'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'site-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

const LISTS = RANGES.map(([network, prefix, family, kind]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { list, family, kind };
});

/** IPv6 prefixes whose last 32 bits are an IPv4 address: mapped, compatible, NAT64. */
const EMBEDS_V4 = [/^::ffff:(?:0:)?/i, /^::(?=[0-9a-f]{1,4}:[0-9a-f]{1,4}$|\d+\.)/i, /^64:ff9b::/i];

/** Why `address` (an IP) is not public, or undefined when it is. */
export function nonPublicKind(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  if (family === 6) {
    const v4 = embeddedV4(address);
    if (v4 !== undefined) {
      const kind = nonPublicKind(v4);
      if (kind !== undefined) return `${kind} (IPv4 embedded in IPv6)`;
    }
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const { list, family: f, kind } of LISTS) if (f === type && list.check(address, type)) return kind;
  return undefined;
}

function embeddedV4(address: string): string | undefined {
  const lower = address.toLowerCase();
  for (const prefix of EMBEDS_V4) {
    const m = prefix.exec(lower);
    if (m === null) continue;
    const tail = lower.slice(m[0].length);
    if (isIP(tail) === 4) return tail;
    const words = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(tail);
    if (words === null) continue;
    const hi = parseInt(words[1]!, 16);
    const lo = parseInt(words[2]!, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return undefined;
}

/** Parses an allow-list entry: an address or CIDR range. Throws with a readable message. */
export function parseAddressRule(rule: string): { network: string; prefix: number; family: 'ipv4' | 'ipv6' } {
  const [network = '', bits, extra] = rule.trim().split('/');
  const family = isIP(network);
  if (family === 0 || extra !== undefined) throw new Error(`'${rule}' is not an IP address or CIDR range (e.g. 10.1.2.0/24)`);
  const max = family === 4 ? 32 : 128;
  const prefix = bits === undefined ? max : Number(bits);
  if (!/^\d{1,3}$/.test(bits ?? String(max)) || prefix > max) throw new Error(`'${rule}': the prefix length must be 0-${max}`);
  return { network, prefix, family: family === 4 ? 'ipv4' : 'ipv6' };
}

export interface AddressPolicy {
  /** Why `address` may not be connected to, or undefined when it may. */
  refusal(address: string): string | undefined;
}

export function addressPolicy(allowPrivate: boolean, allowed: readonly string[]): AddressPolicy {
  if (allowPrivate) return { refusal: () => undefined };
  const allow = new BlockList();
  for (const rule of allowed) {
    const { network, prefix, family } = parseAddressRule(rule);
    allow.addSubnet(network, prefix, family);
  }
  return {
    refusal(address) {
      const kind = nonPublicKind(address);
      if (kind === undefined) return undefined;
      const family = isIP(address) === 4 ? 'ipv4' : 'ipv6';
      return allow.check(address, family) ? undefined : kind;
    },
  };
}

/** Raised (as a connection error) when every address of a host is refused. */
export class BlockedAddressError extends Error {
  readonly code = 'ERR_RESERVOIR_ADDRESS_REFUSED';
  constructor(
    readonly address: string,
    readonly kind: string,
  ) {
    super(`the upstream address ${address} is ${kind}, and private networks are not allowed for this source`);
    this.name = 'BlockedAddressError';
  }
}

/** Resolves like `dns.lookup` (or `resolve`), then drops refused addresses; none left is an error. */
export function guardedLookup(policy: AddressPolicy, resolve: LookupFunction = dnsLookup as LookupFunction): LookupFunction {
  return ((hostname: string, options: LookupOneOptions | LookupAllOptions, callback: (...args: unknown[]) => void) => {
    const all = (options as LookupAllOptions).all === true;
    resolve(hostname, { ...options, all: true }, (error: NodeJS.ErrnoException | null, found: string | LookupAddress[]) => {
      if (error !== null) return callback(error);
      const addresses = typeof found === 'string' ? [{ address: found, family: isIP(found) }] : found;
      let refused: BlockedAddressError | undefined;
      const allowed = addresses.filter((entry) => {
        const kind = policy.refusal(entry.address);
        if (kind !== undefined) refused ??= new BlockedAddressError(entry.address, kind);
        return kind === undefined;
      });
      const first = allowed[0];
      if (first === undefined) return callback(refused ?? Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }));
      return all ? callback(null, allowed) : callback(null, first.address, first.family);
    });
  }) as LookupFunction;
}

/** Checks a URL host that is an IP literal (Node connects to those without any lookup). */
export function checkLiteralHost(policy: AddressPolicy, hostname: string): void {
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (isIP(host) === 0) return;
  const kind = policy.refusal(host);
  if (kind !== undefined) throw new BlockedAddressError(host, kind);
}
