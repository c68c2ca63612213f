import { BlockList, isIPv4, isIPv6 } from 'node:net';

/**
 * The provider's internal networks (CAIRN_UTILIZATION_INTERNAL_NETWORKS): an address inside one
 * of them is internal traffic. Node's BlockList matches IPv4 and IPv6 subnets, an IPv4-mapped IPv6
 * address (::ffff:10.0.0.1, as a dual-stack proxy logs IPv4 peers) against the IPv4 ones too.
 */
export interface Networks {
  /** The list as given, normalised (for config). */
  source: string;
  contains(address: string): boolean;
}

const NONE: Networks = { source: '', contains: () => false };

/** Throws with a sentence naming the first entry that is not a CIDR. */
export function parseNetworks(list: string | undefined): Networks {
  const entries = (list ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (entries.length === 0) return NONE;
  const blocks = new BlockList();
  for (const entry of entries) {
    const m = /^([^/]+)\/(\d{1,3})$/.exec(entry);
    const family = m ? (isIPv4(m[1]!) ? 'ipv4' : isIPv6(m[1]!) ? 'ipv6' : null) : null;
    const prefix = m ? Number(m[2]) : NaN;
    if (!m || !family || prefix > (family === 'ipv4' ? 32 : 128))
      throw new Error(`'${entry.slice(0, 60)}' is not a CIDR (an address, '/', a prefix length)`);
    blocks.addSubnet(m[1]!, prefix, family);
  }
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;
  return {
    source: entries.join(','),
    contains(address: string): boolean {
      const v4 = mapped.exec(address)?.[1] ?? address;
      if (isIPv4(v4)) return blocks.check(v4, 'ipv4');
      return isIPv6(address) && blocks.check(address, 'ipv6');
    },
  };
}
