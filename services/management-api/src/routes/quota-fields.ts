import { NUMBER_LOOKUPS, type FieldDef } from '../http/resource';
import { INT8_MAX } from '../resources/uris';

/** The quota fields of a user; a cluster's defaults are the same with the prefix `default_`. */
export const quotaFields = (prefix: string, whose: string): Record<string, FieldDef> => {
  const scalar = (column: string, what: string): FieldDef => ({
    type: 'integer',
    bigNumber: true,
    nullable: true,
    default: null,
    help: `${what}; null: none. 0 to 2^63-1, a JSON number (a string above 2^53).`,
    column: `${prefix}${column}`,
    filtering: NUMBER_LOOKUPS,
    max: INT8_MAX,
    ordering: true,
  });
  const perPolicy = (what: string): FieldDef => ({
    type: 'dict',
    bigNumber: true,
    nullable: true,
    default: null,
    help: `${what} per storage policy, by the policy's name ({"gold": 1099511627776}); null: none. Replaced whole by a PATCH; a policy the cluster does not report is refused.`,
  });
  return {
    [`${prefix}quota_bytes`]: scalar('quota_bytes', `Bytes ${whose} account may store (Swift's account_quotas)`),
    [`${prefix}quota_bytes_policy`]: perPolicy(`Bytes ${whose} account may store`),
    [`${prefix}quota_count`]: scalar('quota_count', `Objects ${whose} account may hold (Swift 2.34 or later)`),
    [`${prefix}quota_count_policy`]: perPolicy(`Objects ${whose} account may hold (Swift 2.34 or later)`),
  };
};
