import { SwiftConfError } from './errors';
import { IniError, parseIni, sectionItems } from './ini';

/**
 * Storage policies from swift.conf, validated by the rules of Swift 2.30's
 * `swift/common/storage_policy.py` (`parse_storage_policies`, `BaseStoragePolicy`,
 * `ECStoragePolicy`, `StoragePolicyCollection`), checked in the same order so the first problem
 * reported is the one Swift would stop at. Not checked: whether an `ec_type` is available in the
 * local PyECLib build (that depends on the installed libraries).
 */

export type PolicyType = 'replication' | 'erasure_coding';

export interface ErasureCoding {
  type: string;
  dataFragments: number;
  parityFragments: number;
  segmentSize: number;
  duplicationFactor: number;
}

export interface StoragePolicy {
  index: number;
  /** Primary name. */
  name: string;
  /** Further names (from `aliases`), without the primary name. */
  aliases: string[];
  isDefault: boolean;
  isDeprecated: boolean;
  policyType: PolicyType;
  diskfileModule: string;
  /** Only for `erasure_coding` policies. */
  ec?: ErasureCoding;
}

const LEGACY_POLICY_NAME = 'Policy-0';
const VALID_NAME = /^[-A-Za-z0-9]+$/;
const TRUE_VALUES = new Set(['true', '1', 'yes', 'on', 't', 'y']);
const SECTION_PREFIX = 'storage-policy:';
const BASE_OPTIONS = ['name', 'aliases', 'policy_type', 'default', 'deprecated', 'diskfile_module'];
const EC_OPTIONS = [
  'ec_type',
  'ec_object_segment_size',
  'ec_num_data_fragments',
  'ec_num_parity_fragments',
  'ec_duplication_factor',
];
const DEFAULT_EC_SEGMENT_SIZE = 1048576;

class Problem extends Error {}

function fail(reason: string): never {
  throw new Problem(reason);
}

/** Python's `config_true_value` for strings. */
const isTrue = (value: string | undefined): boolean => value !== undefined && TRUE_VALUES.has(value.toLowerCase());

/** Python's `int(str)` for the decimal strings a config file holds; undefined when it would raise. */
function pyInt(value: string | undefined): number | undefined {
  if (value === undefined || !/^\s*[+-]?\d+(_\d+)*\s*$/.test(value)) return undefined;
  const n = Number(value.trim().replace(/_/g, ''));
  return Number.isSafeInteger(n) ? n + 0 : undefined; // + 0 turns -0 into 0
}

function positiveInt(where: string, option: string, value: string | undefined): number {
  const n = pyInt(value);
  if (n === undefined || n <= 0)
    fail(`${where}: ${option} must be a positive integer (got ${JSON.stringify(value ?? null)})`);
  return n;
}

/** Python's `list_from_csv`. */
const csv = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');

function checkName(where: string, index: number, name: string, taken: string[]): void {
  if (name === '') fail(`${where}: a policy needs a name`);
  if (!VALID_NAME.test(name))
    fail(
      `${where}: invalid name ${JSON.stringify(name)} (names are used as HTTP headers: only letters, digits and '-')`,
    );
  if (name.toUpperCase() === LEGACY_POLICY_NAME.toUpperCase() && index !== 0) {
    fail(`${where}: the name ${LEGACY_POLICY_NAME} is reserved for policy index 0 (got ${JSON.stringify(name)})`);
  }
  if (taken.some((t) => t.toUpperCase() === name.toUpperCase()))
    fail(`${where}: the name ${JSON.stringify(name)} is given twice`);
}

function parseEc(where: string, options: Map<string, string>, names: string[], isDeprecated: boolean): ErasureCoding {
  const type = options.get('ec_type');
  if (type === undefined) fail(`${where}: an erasure_coding policy needs ec_type`);
  const dataFragments = positiveInt(where, 'ec_num_data_fragments', options.get('ec_num_data_fragments'));
  const parityFragments = positiveInt(where, 'ec_num_parity_fragments', options.get('ec_num_parity_fragments'));
  const ec: ErasureCoding = {
    type,
    dataFragments,
    parityFragments,
    segmentSize: positiveInt(
      where,
      'ec_object_segment_size',
      options.get('ec_object_segment_size') ?? String(DEFAULT_EC_SEGMENT_SIZE),
    ),
    duplicationFactor: 1,
  };
  // Same order as Swift: ec_type, data, parity, segment size, the isa_l check, duplication factor.
  if (ec.type === 'isa_l_rs_vand' && parityFragments >= 5 && !isDeprecated) {
    fail(
      `${where}: policy ${names[0]} uses isa_l_rs_vand with ${parityFragments} parity fragments, known to harm data durability; it must be deprecated`,
    );
  }
  ec.duplicationFactor = positiveInt(where, 'ec_duplication_factor', options.get('ec_duplication_factor') ?? '1');
  return ec;
}

function parsePolicy(section: string, options: Map<string, string>, fromDefaults: Set<string>): StoragePolicy {
  const where = `[${section}]`;
  const policyType = options.get('policy_type') ?? 'replication';
  if (policyType !== 'replication' && policyType !== 'erasure_coding') {
    fail(`${where}: unknown policy_type ${JSON.stringify(policyType)} (Swift knows replication and erasure_coding)`);
  }
  const allowed = policyType === 'erasure_coding' ? [...BASE_OPTIONS, ...EC_OPTIONS] : BASE_OPTIONS;
  for (const key of options.keys()) {
    if (!allowed.includes(key))
      fail(
        `${where}: invalid option ${JSON.stringify(key)}${fromDefaults.has(key) ? ' (inherited from [DEFAULT])' : ''} for a ${policyType} policy`,
      );
  }
  const rawIndex = section.slice(SECTION_PREFIX.length);
  const index = pyInt(rawIndex);
  if (index === undefined || index < 0)
    fail(`${where}: invalid policy index ${JSON.stringify(rawIndex)} (must be a non-negative integer)`);
  const name = options.get('name') ?? '';
  const names: string[] = [];
  checkName(where, index, name, names);
  names.push(name);
  for (const alias of csv(options.get('aliases'))) {
    if (alias === name) continue;
    checkName(where, index, alias, names);
    names.push(alias);
  }
  const isDeprecated = isTrue(options.get('deprecated'));
  const isDefault = isTrue(options.get('default'));
  if (isDeprecated && isDefault) fail(`${where}: a deprecated policy cannot be the default`);
  const policy: StoragePolicy = {
    index,
    name,
    aliases: names.slice(1),
    isDefault,
    isDeprecated,
    policyType,
    diskfileModule:
      options.get('diskfile_module') ??
      (policyType === 'replication' ? 'egg:swift#replication.fs' : 'egg:swift#erasure_coding.fs'),
  };
  if (policyType === 'erasure_coding') policy.ec = parseEc(where, options, names, isDeprecated);
  return policy;
}

const label = (p: StoragePolicy): string => `policy ${p.index} (${p.name})`;

function validateCollection(policies: StoragePolicy[]): StoragePolicy[] {
  const byIndex = new Map<number, StoragePolicy>();
  const byName = new Map<string, StoragePolicy>();
  let defaultPolicy: StoragePolicy | undefined;
  for (const p of policies) {
    const same = byIndex.get(p.index);
    if (same) fail(`duplicate policy index ${p.index}: ${label(p)} conflicts with ${label(same)}`);
    for (const n of [p.name, ...p.aliases]) {
      const other = byName.get(n.toUpperCase());
      if (other)
        fail(
          `duplicate policy name ${JSON.stringify(n)}: ${label(p)} conflicts with ${label(other)} (names are case-insensitive)`,
        );
    }
    if (p.isDefault) {
      if (defaultPolicy) fail(`two default policies: ${label(p)} conflicts with ${label(defaultPolicy)}`);
      defaultPolicy = p;
    }
    for (const n of [p.name, ...p.aliases]) byName.set(n.toUpperCase(), p);
    byIndex.set(p.index, p);
  }
  if (!byIndex.has(0)) {
    if (byIndex.size > 0)
      fail('no [storage-policy:0] section: Swift needs one for policy index 0 as soon as any policy is defined');
    byIndex.set(0, {
      index: 0,
      name: LEGACY_POLICY_NAME,
      aliases: [],
      isDefault: false,
      isDeprecated: false,
      policyType: 'replication',
      diskfileModule: 'egg:swift#replication.fs',
    });
  }
  if (![...byIndex.values()].some((p) => !p.isDeprecated)) fail('every policy is deprecated; at least one must not be');
  if (!defaultPolicy) {
    if (byIndex.size > 1) fail(`no default policy: with ${byIndex.size} policies, exactly one needs "default = yes"`);
    (byIndex.get(0) as StoragePolicy).isDefault = true;
  }
  return [...byIndex.values()].sort((a, b) => a.index - b.index);
}

/**
 * The storage policies defined by swift.conf's `[storage-policy:<N>]` sections, sorted by index.
 * Without any such section there is exactly one policy, `Policy-0` (index 0, default), as in Swift.
 * Anything Swift would refuse is a `SwiftConfError` naming the section and the problem.
 */
export function parseSwiftConf(text: string, fileName = 'swift.conf'): StoragePolicy[] {
  try {
    const ini = parseIni(text);
    const policies: StoragePolicy[] = [];
    for (const section of ini.sections.keys()) {
      if (!section.startsWith(SECTION_PREFIX)) continue;
      const own = ini.sections.get(section) as Map<string, string>;
      const fromDefaults = new Set([...ini.defaults.keys()].filter((k) => !own.has(k)));
      policies.push(parsePolicy(section, sectionItems(ini, section), fromDefaults));
    }
    return validateCollection(policies);
  } catch (e) {
    if (e instanceof Problem || e instanceof IniError) throw new SwiftConfError(fileName, e.message);
    throw e;
  }
}
