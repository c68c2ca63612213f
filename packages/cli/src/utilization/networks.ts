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

/**
 * An IPv4 address in the one form Node's isIPv4 takes (four decimal octets, no leading zeros) as
 * a number; null for anything else, which is then left to isIPv4 and the BlockList.
 */
function ipv4Number(s: string): number | null {
  let n = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || dots === 3) return null;
      n = n * 256 + octet;
      octet = 0;
      digits = 0;
      dots++;
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && octet === 0) return null;
      octet = octet * 10 + (c - 48);
      if (++digits > 3 || octet > 255) return null;
    } else return null;
  }
  if (digits === 0 || dots !== 3) return null;
  return n * 256 + octet;
}

/** Throws with a sentence naming the first entry that is not a CIDR. */
export function parseNetworks(list: string | undefined): Networks {
  const entries = (list ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (entries.length === 0) return NONE;
  const blocks = new BlockList();
  // IPv4 subnets as numbers too: BlockList.check builds an address object per call, which a log
  // reader asking once a line cannot afford.
  const v4Subnets: Array<{ network: number; size: number }> = [];
  for (const entry of entries) {
    const m = /^([^/]+)\/(\d{1,3})$/.exec(entry);
    const family = m ? (isIPv4(m[1]!) ? 'ipv4' : isIPv6(m[1]!) ? 'ipv6' : null) : null;
    const prefix = m ? Number(m[2]) : NaN;
    if (!m || !family || prefix > (family === 'ipv4' ? 32 : 128))
      throw new Error(`'${entry.slice(0, 60)}' is not a CIDR (an address, '/', a prefix length)`);
    blocks.addSubnet(m[1]!, prefix, family);
    if (family === 'ipv4') {
      const size = 2 ** (32 - prefix);
      v4Subnets.push({ network: Math.floor(ipv4Number(m[1]!)! / size) * size, size });
    }
  }
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;
  return {
    source: entries.join(','),
    contains(address: string): boolean {
      const n = ipv4Number(address);
      if (n !== null) return v4Subnets.some((s) => n - s.network >= 0 && n - s.network < s.size);
      const v4 = mapped.exec(address)?.[1] ?? address;
      if (isIPv4(v4)) return blocks.check(v4, 'ipv4');
      return isIPv6(address) && blocks.check(address, 'ipv6');
    },
  };
}
