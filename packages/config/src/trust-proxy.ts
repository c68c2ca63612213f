import { isIP } from 'node:net';
import Joi from 'joi';

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** One trusted proxy: an address, a CIDR range, or one of proxy-addr's names. */
function isProxyRange(entry: string): boolean {
  if (PROXY_NAMES.has(entry)) return true;
  const [address = '', bits, ...rest] = entry.split('/');
  const family = isIP(address);
  if (!family || rest.length > 0) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

/** CAIRN_TRUST_PROXY: false, a hop count, or a list of proxies; never `true` (trust anyone). */
export function trustProxySchema() {
  return Joi.alternatives()
    .try(
      Joi.boolean().valid(false),
      Joi.number().integer().min(1).max(32),
      Joi.string()
        .max(4096)
        .custom((value: string, helpers) => {
          if (value.trim().toLowerCase() === 'true') return helpers.error('trustProxy.everyone');
          const list = value
            .split(',')
            .map((e) => e.trim())
            .filter(Boolean);
          if (list.length === 0 || !list.every(isProxyRange)) return helpers.error('any.invalid');
          return list;
        })
        .messages({
          'trustProxy.everyone':
            "must not be 'true': every client could then choose its own address; give the load balancers' addresses or a hop count",
        }),
    )
    .messages({
      'alternatives.match':
        "must be false, a hop count (1-32) or a comma-separated list of proxy addresses/CIDR ranges ('true' is refused: every client could choose its own address)",
      'any.invalid':
        'must be a comma-separated list of proxy addresses, CIDR ranges, loopback, linklocal or uniquelocal',
    });
}

/** What trustProxySchema gives: express's `trust proxy` setting. */
export type TrustProxy = false | number | string[];
