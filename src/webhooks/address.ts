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
for (const [network, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['2001:db8::', 32], ['64:ff9b::', 96]] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv6');
}

/** Whether an address is one webhooks may reach without WEBHOOK_ALLOW_PRIVATE_NETWORKS. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !BLOCKED.check(address, 'ipv4');
  if (family !== 6) return false;
  // IPv4 written as IPv6 (::ffff:10.0.0.1) is judged as IPv4.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? isPublicAddress(mapped[1]!) : !BLOCKED.check(address, 'ipv6');
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
    return { fault: `the host ${host} does not resolve` };
  }
  if (addresses.length === 0) return { fault: `the host ${host} does not resolve` };
  const refused = policy.allowPrivate ? undefined : addresses.find((a) => !isPublicAddress(a.address));
  return refused ? { fault: `the host ${host} resolves to ${refused.address}, a private, loopback or reserved address` } : { addresses };
}
