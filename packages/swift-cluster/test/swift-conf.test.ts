import { parseSwiftConf, SwiftConfError, type StoragePolicy } from '../src';

/**
 * Expectations below were checked once against Swift 2.30.1's own parse_storage_policies (ConfigParser
 * strict=False), same input, same outcome.
 */

const replication = (index: number, name: string, extra: Partial<StoragePolicy> = {}): StoragePolicy => ({
  index,
  name,
  aliases: [],
  isDefault: false,
  isDeprecated: false,
  policyType: 'replication',
  diskfileModule: 'egg:swift#replication.fs',
  ...extra,
});

function reasonFor(text: string): string {
  try {
    parseSwiftConf(text);
  } catch (e) {
    if (e instanceof SwiftConfError) {
      expect(e.message).toBe(`swift.conf: ${e.reason}`);
      return e.reason;
    }
    throw e;
  }
  throw new Error('parseSwiftConf accepted the text');
}

const GOLD_DEFAULT = '[storage-policy:0]\nname = gold\ndefault = yes\n';

describe('parseSwiftConf', () => {
  it('when swift.conf is the SAIO sample, then gold (default) and silver come back', () => {
    const text = [
      '[swift-hash]',
      'swift_hash_path_prefix = test-prefix',
      'swift_hash_path_suffix = test-suffix',
      '[storage-policy:0]',
      'name = gold',
      'default = yes',
      'policy_type = replication',
      '[storage-policy:1]',
      'name = silver',
      'policy_type = replication',
      '[swift-constraints]',
      '',
    ].join('\n');
    expect(parseSwiftConf(text)).toEqual([replication(0, 'gold', { isDefault: true }), replication(1, 'silver')]);
  });

  it('when there is no storage-policy section, then Policy-0 exists and is the default', () => {
    expect(parseSwiftConf('[swift-hash]\nswift_hash_path_suffix = x\n')).toEqual([
      replication(0, 'Policy-0', { isDefault: true }),
    ]);
    expect(parseSwiftConf('')).toEqual([replication(0, 'Policy-0', { isDefault: true })]);
  });

  it('when only policy 0 is defined and not marked default, then it is the default', () => {
    expect(parseSwiftConf('[storage-policy:0]\nname = gold\n')).toEqual([replication(0, 'gold', { isDefault: true })]);
  });

  it('when policies are defined without policy 0, then Swift refuses (it does not add Policy-0 then)', () => {
    expect(reasonFor('[storage-policy:1]\nname = silver\ndefault = yes\n')).toBe(
      'no [storage-policy:0] section: Swift needs one for policy index 0 as soon as any policy is defined',
    );
  });

  it('when two policies and none is default, then that is an error', () => {
    expect(reasonFor('[storage-policy:0]\nname = gold\n[storage-policy:1]\nname = silver\n')).toBe(
      'no default policy: with 2 policies, exactly one needs "default = yes"',
    );
  });

  it('when two policies are default, then both are named', () => {
    expect(reasonFor(`${GOLD_DEFAULT}[storage-policy:1]\nname = silver\ndefault = true\n`)).toBe(
      'two default policies: policy 1 (silver) conflicts with policy 0 (gold)',
    );
  });

  it.each(['yes', 'Y', 'true', 'TRUE', '1', 'on', 't'])(
    'when default = %s, then the policy is the default',
    (value) => {
      expect(
        parseSwiftConf(`[storage-policy:0]\nname = gold\n[storage-policy:1]\nname = s\ndefault = ${value}\n`)[1]
          ?.isDefault,
      ).toBe(true);
    },
  );

  it.each(['no', 'yes please', '2', ''])('when default = %j, then it is not a default', (value) => {
    expect(
      reasonFor(`[storage-policy:0]\nname = gold\ndefault = ${value}\n[storage-policy:1]\nname = silver\n`),
    ).toMatch(/^no default policy/);
  });

  it('when the default policy is deprecated, then that is an error', () => {
    expect(reasonFor(`${GOLD_DEFAULT}deprecated = yes\n`)).toBe(
      '[storage-policy:0]: a deprecated policy cannot be the default',
    );
  });

  it('when every policy is deprecated, then that is an error', () => {
    expect(reasonFor('[storage-policy:0]\nname = gold\ndeprecated = yes\n')).toBe(
      'every policy is deprecated; at least one must not be',
    );
  });

  it('when a deprecated policy 0 sits next to a default policy 1, then both are kept', () => {
    expect(
      parseSwiftConf(
        '[storage-policy:0]\nname = gold\ndeprecated = yes\n[storage-policy:1]\nname = silver\ndefault = 1\n',
      ),
    ).toEqual([replication(0, 'gold', { isDeprecated: true }), replication(1, 'silver', { isDefault: true })]);
  });

  it('when keys differ in case, use ":" or are indented, then they are read like ConfigParser does', () => {
    expect(parseSwiftConf('[storage-policy:0]\n  NAME : gold\n  Default: Y\n')).toEqual([
      replication(0, 'gold', { isDefault: true }),
    ]);
  });

  it('when lines are commented with # or ;, then they are skipped, but a # after a value is part of it', () => {
    expect(parseSwiftConf('# c\n; c\n[storage-policy:0]\n  # indented comment\nname = gold\n')[0]?.name).toBe('gold');
    expect(reasonFor('[storage-policy:0]\nname = gold # inline\n')).toBe(
      `[storage-policy:0]: invalid name "gold # inline" (names are used as HTTP headers: only letters, digits and '-')`,
    );
  });

  it('when a value continues on an indented line, then the lines are joined with a newline', () => {
    expect(reasonFor('[storage-policy:0]\nname = gold\n  continued\n')).toMatch(/invalid name "gold\\ncontinued"/);
  });

  it('when lines end in CRLF, then they parse the same', () => {
    expect(parseSwiftConf(`${GOLD_DEFAULT}[storage-policy:1]\nname = silver\n`.replace(/\n/g, '\r\n'))).toHaveLength(2);
  });

  it('when a section or key repeats, then sections merge and the last value wins', () => {
    expect(
      parseSwiftConf('[storage-policy:0]\nname = gold\n[storage-policy:0]\nname = platinum\ndefault = yes\n'),
    ).toEqual([replication(0, 'platinum', { isDefault: true })]);
  });

  it('when an index is written differently (" 1 ", "+2", "1_0"), then it is read as Python int() reads it', () => {
    const policies = parseSwiftConf(
      `${GOLD_DEFAULT}[storage-policy: 1 ]\nname = one\n[storage-policy:+2]\nname = two\n[storage-policy:1_0]\nname = ten\n`,
    );
    expect(policies.map((p) => p.index)).toEqual([0, 1, 2, 10]);
  });

  it('when two sections give the same index, then the duplicate is named', () => {
    expect(reasonFor(`${GOLD_DEFAULT}[storage-policy:00]\nname = silver\n`)).toBe(
      'duplicate policy index 0: policy 0 (silver) conflicts with policy 0 (gold)',
    );
  });

  it.each(['abc', '-1', '1.5', ''])('when the index is %j, then it is invalid', (index) => {
    expect(reasonFor(`${GOLD_DEFAULT}[storage-policy:${index}]\nname = x\n`)).toBe(
      `[storage-policy:${index}]: invalid policy index ${JSON.stringify(index)} (must be a non-negative integer)`,
    );
  });

  it('when a name is missing or empty, then the policy needs a name', () => {
    expect(reasonFor('[storage-policy:0]\ndefault = yes\n')).toBe('[storage-policy:0]: a policy needs a name');
    expect(reasonFor('[storage-policy:0]\nname =\n')).toBe('[storage-policy:0]: a policy needs a name');
  });

  it.each(['gold bar', 'gold_bar', 'g\u00f6ld'])(
    'when the name is %j, then it is refused (letters, digits and - only)',
    (name) => {
      expect(reasonFor(`[storage-policy:0]\nname = ${name}\n`)).toMatch(/^\[storage-policy:0\]: invalid name /);
    },
  );

  it('when another policy than 0 is named Policy-0 (any case), then that is refused', () => {
    expect(reasonFor(`${GOLD_DEFAULT}[storage-policy:1]\nname = policy-0\n`)).toBe(
      '[storage-policy:1]: the name Policy-0 is reserved for policy index 0 (got "policy-0")',
    );
    expect(parseSwiftConf('[storage-policy:0]\nname = Policy-0\n')[0]?.name).toBe('Policy-0');
  });

  it('when names collide across policies ignoring case, then both policies are named', () => {
    expect(reasonFor(`${GOLD_DEFAULT}[storage-policy:1]\nname = GOLD\n`)).toBe(
      'duplicate policy name "GOLD": policy 1 (GOLD) conflicts with policy 0 (gold) (names are case-insensitive)',
    );
    expect(reasonFor(`${GOLD_DEFAULT}[storage-policy:1]\nname = silver\naliases = gold\n`)).toMatch(
      /^duplicate policy name "gold": policy 1 \(silver\)/,
    );
  });

  it('when aliases are listed, then they are trimmed, empty ones and the primary name are dropped', () => {
    expect(parseSwiftConf('[storage-policy:0]\nname = gold\naliases = gold, yellow , ,au\n')[0]?.aliases).toEqual([
      'yellow',
      'au',
    ]);
  });

  it('when an alias repeats a name of the same policy in another case, then that is refused', () => {
    expect(reasonFor('[storage-policy:0]\nname = gold\naliases = Gold\n')).toBe(
      '[storage-policy:0]: the name "Gold" is given twice',
    );
  });

  it('when an option is unknown, then it is named (including options inherited from [DEFAULT])', () => {
    expect(reasonFor('[storage-policy:0]\nname = gold\nfoo = bar\n')).toBe(
      '[storage-policy:0]: invalid option "foo" for a replication policy',
    );
    expect(reasonFor('[DEFAULT]\nfoo = bar\n[storage-policy:0]\nname = gold\n')).toBe(
      '[storage-policy:0]: invalid option "foo" (inherited from [DEFAULT]) for a replication policy',
    );
  });

  it('when policy_type is unknown (it is case-sensitive), then that is refused', () => {
    expect(reasonFor('[storage-policy:0]\nname = gold\npolicy_type = Replication\n')).toBe(
      '[storage-policy:0]: unknown policy_type "Replication" (Swift knows replication and erasure_coding)',
    );
  });

  it('when a value holds a % that is not an interpolation, then it is refused as ConfigParser does; %% is a %', () => {
    expect(reasonFor('[storage-policy:0]\nname = go%ld\n')).toBe(
      `[storage-policy:0] name: '%' must be followed by '%' or '(', found "%ld"`,
    );
    expect(reasonFor('[storage-policy:0]\nname = %%gold\n')).toMatch(/invalid name "%gold"/);
  });

  it('when a line is neither a section, a key/value nor a comment, then its line number is given', () => {
    expect(reasonFor('[storage-policy:0]\nname = gold\njunk\n= value\n')).toBe(
      'cannot parse line 3: "junk", line 4: "= value" (expected "key = value" or a [section] header)',
    );
    expect(reasonFor('name = gold\n[storage-policy:0]\n')).toBe(
      'line 1: "name = gold" comes before any [section] header',
    );
  });

  it('when a policy is erasure coded, then its EC settings are read with Swift defaults', () => {
    const [, ec] = parseSwiftConf(
      `${GOLD_DEFAULT}[storage-policy:1]\nname = ec42\npolicy_type = erasure_coding\nec_type = liberasurecode_rs_vand\nec_num_data_fragments = 4\nec_num_parity_fragments = 2\n`,
    );
    expect(ec).toEqual({
      index: 1,
      name: 'ec42',
      aliases: [],
      isDefault: false,
      isDeprecated: false,
      policyType: 'erasure_coding',
      diskfileModule: 'egg:swift#erasure_coding.fs',
      ec: {
        type: 'liberasurecode_rs_vand',
        dataFragments: 4,
        parityFragments: 2,
        segmentSize: 1048576,
        duplicationFactor: 1,
      },
    });
  });

  it.each([
    [
      'ec_type',
      'ec_num_data_fragments = 4\nec_num_parity_fragments = 2\n',
      '[storage-policy:1]: an erasure_coding policy needs ec_type',
    ],
    [
      'data fragments',
      'ec_type = x\nec_num_data_fragments = 0\nec_num_parity_fragments = 2\n',
      '[storage-policy:1]: ec_num_data_fragments must be a positive integer (got "0")',
    ],
    [
      'parity fragments',
      'ec_type = x\nec_num_data_fragments = 4\n',
      '[storage-policy:1]: ec_num_parity_fragments must be a positive integer (got null)',
    ],
    [
      'a duplication factor',
      'ec_type = x\nec_num_data_fragments = 4\nec_num_parity_fragments = 2\nec_duplication_factor = 0\n',
      '[storage-policy:1]: ec_duplication_factor must be a positive integer (got "0")',
    ],
    [
      'isa_l_rs_vand with 5 parity fragments',
      'ec_type = isa_l_rs_vand\nec_num_data_fragments = 10\nec_num_parity_fragments = 5\n',
      '[storage-policy:1]: policy ec uses isa_l_rs_vand with 5 parity fragments, known to harm data durability; it must be deprecated',
    ],
  ])('when an EC policy has a bad %s, then that is refused', (_what, options, reason) => {
    expect(reasonFor(`${GOLD_DEFAULT}[storage-policy:1]\nname = ec\npolicy_type = erasure_coding\n${options}`)).toBe(
      reason,
    );
  });

  it('when EC options appear in a replication policy, then they are invalid options', () => {
    expect(reasonFor('[storage-policy:0]\nname = gold\nec_type = liberasurecode_rs_vand\n')).toBe(
      '[storage-policy:0]: invalid option "ec_type" for a replication policy',
    );
  });

  it('when the file name is given, then errors name it', () => {
    expect(() => parseSwiftConf('[storage-policy:0]\n', '/etc/swift/swift.conf')).toThrow(
      '/etc/swift/swift.conf: [storage-policy:0]: a policy needs a name',
    );
  });
});
