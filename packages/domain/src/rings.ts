/**
 * Swift's ring names: `account`, `container`, `object` (storage policy 0) and `object-<n>` (policy
 * n ≥ 1), each in `<name>.ring.gz` under the swift dir.
 */
export const RING_NAME = /^(account|container|object(-[1-9]\d{0,9})?)$/;

export const isRingName = (name: string): boolean => RING_NAME.test(name);

export const RING_NAME_RULE = "'account', 'container', 'object' or 'object-<n>' (n, a storage policy index from 1)";
