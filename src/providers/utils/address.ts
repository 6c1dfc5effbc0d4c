/**
 * Which upstream addresses may be connected to. Unless a source allows private networks, every
 * address that is not public — loopback, private, link-local (cloud metadata at 169.254.169.254),
 * unique-local, unspecified, shared (CGNAT), multicast, documentation, reserved — is refused.
 * Shared by the providers that connect out (http, s3). IPv6 forms that embed an IPv4 address are judged by that address, in any spelling the parser
 * accepts (expanded, compressed, dotted): IPv4-mapped `::ffff:0:0/96`, IPv4-translated
 * `::ffff:0:0:0/96`, IPv4-compatible `::/96`, NAT64 well-known `64:ff9b::/96` and 6to4 `2002::/16`.
 * Tunnels and translators whose far end cannot be judged from the address — Teredo `2001::/32`
 * and NAT64 local-use `64:ff9b:1::/48` (a site's own translator, which reaches its private
 * networks) — are refused outright.
 *
 * The check runs where the connection is made: `guardedLookup` is the DNS `lookup` of the provider's
 * HTTP agents, so the address checked is the address connected to (no window between a check and
 * the connection for DNS rebinding). IP-literal hosts, which Node connects to without a lookup,
 * are checked by `checkLiteralHost` — they cannot change between the check and the connection.
 */
import {
  lookup as dnsLookup,
  type LookupAddress,
  type LookupAllOptions,
  type LookupOneOptions,
} from 'node:dns';
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
  ['192.0.2.0', 24, 'ipv4', 'documentation'],
  ['198.18.0.0', 15, 'ipv4', 'reserved'],
  ['198.51.100.0', 24, 'ipv4', 'documentation'],
  ['203.0.113.0', 24, 'ipv4', 'documentation'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['64:ff9b:1::', 48, 'ipv6', 'NAT64 local-use'],
  ['100::', 64, 'ipv6', 'discard-only'],
  ['2001::', 32, 'ipv6', 'Teredo (tunnelled)'],
  ['2001:2::', 48, 'ipv6', 'reserved (benchmarking)'],
  ['2001:10::', 28, 'ipv6', 'reserved (ORCHID)'],
  ['2001:20::', 28, 'ipv6', 'reserved (ORCHIDv2)'],
  ['2001:db8::', 32, 'ipv6', 'documentation'],
  ['3fff::', 20, 'ipv6', 'documentation'],
  ['5f00::', 16, 'ipv6', 'reserved (SRv6 SIDs)'],
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

/**
 * IPv6 forms carrying an IPv4 address: the words that must match (a prefix of the eight), where the
 * IPv4 address sits (index of its first word), and the form's name.
 */
const EMBEDS_V4: readonly { words: readonly number[]; at: number; form: string }[] = [
  { words: [0, 0, 0, 0, 0, 0xffff], at: 6, form: 'IPv4-mapped' },
  { words: [0, 0, 0, 0, 0xffff, 0], at: 6, form: 'IPv4-translated' },
  { words: [0, 0, 0, 0, 0, 0], at: 6, form: 'IPv4-compatible' },
  { words: [0x64, 0xff9b, 0, 0, 0, 0], at: 6, form: 'NAT64' },
  { words: [0x2002], at: 1, form: '6to4' },
];

/** Why `address` (an IP) is not public, or undefined when it is. */
export function nonPublicKind(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  if (family === 6) {
    const embedded = embeddedV4(address);
    if (embedded !== undefined) {
      const kind = nonPublicKind(embedded.v4);
      if (kind !== undefined) return `${kind} (IPv4 embedded in IPv6, ${embedded.form})`;
    }
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const { list, family: f, kind } of LISTS)
    if (f === type && list.check(address, type)) return kind;
  return undefined;
}

/** The IPv4 address an IPv6 address embeds, with the form's name; undefined for none. */
function embeddedV4(address: string): { v4: string; form: string } | undefined {
  const words = ipv6Words(address);
  if (words === undefined) return undefined;
  for (const { words: prefix, at, form } of EMBEDS_V4) {
    if (!prefix.every((w, i) => words[i] === w)) continue;
    // ::/96 also holds :: and ::1, which are judged as themselves (unspecified, loopback).
    if (form === 'IPv4-compatible' && words[6] === 0 && words[7]! <= 1) continue;
    const hi = words[at]!;
    const lo = words[at + 1]!;
    return { v4: `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, form };
  }
  return undefined;
}

/** The eight 16-bit words of an IPv6 address (any spelling `isIP` accepts, zone id dropped). */
export function ipv6Words(address: string): number[] | undefined {
  const bare = address.split('%')[0]!.toLowerCase();
  if (isIP(bare) !== 6) return undefined;
  const parse = (part: string): number[] => {
    if (part === '') return [];
    const out: number[] = [];
    for (const piece of part.split(':')) {
      if (piece.includes('.')) {
        const [a, b, c, d] = piece.split('.').map(Number) as [number, number, number, number];
        out.push((a << 8) | b, (c << 8) | d);
      } else {
        out.push(parseInt(piece, 16));
      }
    }
    return out;
  };
  const gap = bare.indexOf('::');
  if (gap < 0) return parse(bare);
  const head = parse(bare.slice(0, gap));
  const tail = parse(bare.slice(gap + 2));
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

/** Parses an allow-list entry: an address or CIDR range. Throws with a readable message. */
export function parseAddressRule(rule: string): {
  network: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
} {
  const [network = '', bits, extra] = rule.trim().split('/');
  const family = isIP(network);
  if (family === 0 || extra !== undefined)
    throw new Error(`'${rule}' is not an IP address or CIDR range (e.g. 10.1.2.0/24)`);
  const max = family === 4 ? 32 : 128;
  const prefix = bits === undefined ? max : Number(bits);
  if (!/^\d{1,3}$/.test(bits ?? String(max)) || prefix > max)
    throw new Error(`'${rule}': the prefix length must be 0-${max}`);
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
    super(
      `the upstream address ${address} is ${kind}, and private networks are not allowed for this source`,
    );
    this.name = 'BlockedAddressError';
  }
}

/** Resolves like `dns.lookup` (or `resolve`), then drops refused addresses; none left is an error. */
export function guardedLookup(
  policy: AddressPolicy,
  resolve: LookupFunction = dnsLookup as LookupFunction,
): LookupFunction {
  return ((
    hostname: string,
    options: LookupOneOptions | LookupAllOptions,
    callback: (...args: unknown[]) => void,
  ) => {
    const all = (options as LookupAllOptions).all === true;
    resolve(
      hostname,
      { ...options, all: true },
      (error: NodeJS.ErrnoException | null, found: string | LookupAddress[]) => {
        if (error !== null) return callback(error);
        const addresses =
          typeof found === 'string' ? [{ address: found, family: isIP(found) }] : found;
        let refused: BlockedAddressError | undefined;
        const allowed = addresses.filter((entry) => {
          const kind = policy.refusal(entry.address);
          if (kind !== undefined) refused ??= new BlockedAddressError(entry.address, kind);
          return kind === undefined;
        });
        const first = allowed[0];
        if (first === undefined)
          return callback(
            refused ??
              Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }),
          );
        return all ? callback(null, allowed) : callback(null, first.address, first.family);
      },
    );
  }) as LookupFunction;
}

/** Checks a URL host that is an IP literal (Node connects to those without any lookup). */
export function checkLiteralHost(policy: AddressPolicy, hostname: string): void {
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (isIP(host) === 0) return;
  const kind = policy.refusal(host);
  if (kind !== undefined) throw new BlockedAddressError(host, kind);
}
