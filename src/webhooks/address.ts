// Where webhooks may go. An endpoint is https:// (http:// only with WEBHOOK_ALLOW_HTTP), and
// its host must not resolve to loopback, private, link-local, shared, multicast or metadata
// addresses (unless WEBHOOK_ALLOW_PRIVATE_NETWORKS, for tests and local development): checked
// when the endpoint is saved and again at every delivery, on the very address connected to,
// because DNS can change in between.
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

export interface AddressPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
}

const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) BLOCKED.addSubnet(network, prefix, 'ipv4');
// Unique-local, link-local, multicast, documentation, NAT64 (whose IPv4 side is a
// translator's to choose) and Teredo (a tunnel whose IPv4 end is hidden in the address).
for (const [network, prefix] of [
  ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['2001:db8::', 32], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['2001::', 32],
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv6');
}

/** The eight 16-bit groups of an IPv6 address (its last two may be written as IPv4). */
function groupsOf(address: string): number[] {
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  const text = dotted ? address.slice(0, dotted.index) + [((+dotted[1]! << 8) | +dotted[2]!).toString(16), ((+dotted[3]! << 8) | +dotted[4]!).toString(16)].join(':') : address;
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const part = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const front = part(head);
  const back = part(tail);
  return tail === undefined ? front : [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
}

/** The IPv4 address an IPv6 address carries in its last 32 bits, or from `at` (a group index). */
const ipv4At = (groups: number[], at: number) => [groups[at]! >> 8, groups[at]! & 255, groups[at + 1]! >> 8, groups[at + 1]! & 255].join('.');

/**
 * The IPv4 address an IPv6 form embeds and is routed to: mapped (::ffff:a.b.c.d, in either
 * spelling), compatible (::a.b.c.d, which covers :: and ::1) and 6to4 (2002:AABB:CCDD::).
 */
function embeddedIpv4(groups: number[]): string | undefined {
  const zeros = (n: number) => groups.slice(0, n).every((g) => g === 0);
  if (zeros(5) && groups[5] === 0xffff) return ipv4At(groups, 6);
  if (zeros(6)) return ipv4At(groups, 6);
  if (groups[0] === 0x2002) return ipv4At(groups, 1);
  return undefined;
}

/** Whether an address is one webhooks may reach without WEBHOOK_ALLOW_PRIVATE_NETWORKS. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !BLOCKED.check(address, 'ipv4');
  if (family !== 6) return false;
  // An IPv6 form of an IPv4 address is judged as that IPv4 address.
  const embedded = embeddedIpv4(groupsOf(address.replace(/%.*$/, '')));
  if (embedded !== undefined) return isPublicAddress(embedded);
  return !BLOCKED.check(address, 'ipv6');
}

/** What is wrong with an endpoint URL's form, if anything. */
export function urlFault(raw: string, policy: AddressPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (raw.length > 2000) return 'must be at most 2000 characters';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) return policy.allowHttp ? 'must be an http:// or https:// URL' : 'must be an https:// URL';
  if (url.username || url.password) return 'must not carry a user name or password';
  return undefined;
}

/** The addresses a host resolves to, refused (with the reason) when any is not allowed. */
export async function resolveAllowed(host: string, policy: AddressPolicy): Promise<{ addresses: Array<{ address: string; family: number }> } | { fault: string }> {
  const bare = host.replace(/^\[|\]$/g, '');
  let addresses: Array<{ address: string; family: number }>;
  try {
    addresses = isIP(bare) ? [{ address: bare, family: isIP(bare) }] : await lookup(bare, { all: true });
  } catch {
    return { fault: 'its host does not resolve' };
  }
  if (addresses.length === 0) return { fault: 'its host does not resolve' };
  // Which address it was is the resolver's (often internal) answer: not said.
  const refused = policy.allowPrivate ? undefined : addresses.find((a) => !isPublicAddress(a.address));
  return refused ? { fault: 'its address is not allowed (private, loopback or reserved networks are refused)' } : { addresses };
}
