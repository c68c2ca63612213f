import Joi from 'joi';
import {
  CairnError,
  apiKeySchema,
  operatorNameSchema,
  HOST_COMMAND_NAMES,
  clusterCreateSchema,
  clusterPatchSchema,
  operatorCreateSchema,
  isSwiftAccountName,
  userCreateSchema,
  userPatchSchema,
  usernameSchema,
  validate,
  type ClusterCreateInput,
  type ClusterPatchInput,
  type UserCreateInput,
  type UserPatchInput,
} from '../src';

/** Runs `validate` and returns the CairnError it throws (fails the test if it does not throw one). */
function refusal(schema: Joi.Schema, value: unknown): CairnError {
  try {
    validate(schema, value);
  } catch (e) {
    if (e instanceof CairnError) return e;
    throw e;
  }
  throw new Error(`expected ${JSON.stringify(value)} to be refused`);
}

const PASSWORD_20 = 'abcdefghij0123456789';
const validUser = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  cluster: '/api/v1/clusters/1/',
  user: 'alice',
  password: PASSWORD_20,
  ...overrides,
});

const validCluster = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: 'TestCluster',
  auth_url: 'https://auth.example.com/',
  storage_url: 'https://swift.example.com/v1',
  ...overrides,
});

/** The rule for new usernames, as a person reading the 400 needs to see it: what is allowed and why. */
function expectUsernameRuleMessage(error: CairnError): void {
  expect(error.code).toBe('INVALID_INPUT');
  expect(error.message).toContain("'user'");
  expect(error.message).toContain('1 to 251 characters');
  expect(error.message).toContain("'/'");
  expect(error.message).toContain("':'");
  expect(error.message).toContain('control characters');
  expect(error.message).toContain('ASCII or Latin-1');
  expect(error.message).toContain('at most 256 characters in an account name');
  expect(error.message).toContain('beyond Latin-1');
}

describe('user usernames', () => {
  it.each([
    ['a single character', 'a'],
    ["251 characters (AUTH_ + 251 is Swift's limit of 256)", 'u'.repeat(251)],
    ['251 Latin-1 letters', 'ü'.repeat(251)],
    ['non-ASCII letters', 'jöhn'],
    ['Latin-1 letters and signs', 'Ærøskøbing ÿ© ß ñ'],
    ['a no-break space (U+00A0, the first of Latin-1)', 'a\u00a0b'],
    ['dots, dashes, @ and spaces', 'first.last-name@example user'],
    ["ASCII punctuation: ' + ? # % & ; = ~", "o'brien+tag?#%41&x=1;y~"],
  ])('when the username is %s, then it is accepted unchanged', (_label, user) => {
    const out = validate<UserCreateInput>(userCreateSchema, validUser({ user }));
    expect(out.user).toBe(user);
  });

  it.each([
    ['252 characters', 'u'.repeat(252)],
    ['255 characters', 'u'.repeat(255)],
    ['252 Latin-1 letters', 'ü'.repeat(252)],
    ['an emoji', 'party🎉user'],
    ['CJK characters', '山田太郎'],
    ['U+0100, the first character beyond Latin-1', 'a\u0100b'],
    ['empty', ''],
    ["containing '/'", 'ali/ce'],
    ["containing ':'", 'ali:ce'],
    ['containing a newline', 'ali\nce'],
    ['containing NUL', 'ali\u0000ce'],
    ['containing a tab', 'ali\tce'],
    ['containing DEL', 'ali\u007fce'],
    ['containing NEL (U+0085, a C1 control)', 'ali\u0085ce'],
  ])('when the username is %s, then it is refused with a message naming the rule', (_label, user) => {
    expectUsernameRuleMessage(refusal(userCreateSchema, validUser({ user })));
  });

  it('when the username is a lone UTF-16 surrogate, then it is refused (it is not a character and cannot be stored as UTF-8)', () => {
    // A JSON body may carry "\ud800"; Postgres (UTF-8) cannot hold it, node would silently turn it
    // into U+FFFD, so the stored name would differ from the validated one.
    expectUsernameRuleMessage(refusal(userCreateSchema, validUser({ user: 'ali\ud800ce' })));
  });

  it('when the username is not a string, then it is refused naming the field', () => {
    const error = refusal(userCreateSchema, validUser({ user: 42 }));
    expect(error.message).toContain("'user'");
  });
});

describe('names an existing user may have (logins and scopes at the gateway)', () => {
  it.each([
    ['CJK characters', '山田太郎'],
    ['an emoji', 'party🎉user'],
    ['255 characters', 'u'.repeat(255)],
    ['255 emoji', '😀'.repeat(255)],
  ])('when a name created under the earlier rule is %s, then it is still a well-formed name', (_label, name) => {
    expect(usernameSchema.validate(name).error).toBeUndefined();
  });

  it.each([
    ['256 characters', 'u'.repeat(256)],
    ["'/'", 'a/b'],
    ["':'", 'a:b'],
    ['NUL', 'a\u0000b'],
    ['a lone surrogate', '\ud800'],
  ])('when a name has %s, then it is not', (_label, name) => {
    expect(usernameSchema.validate(name).error).toBeDefined();
  });
});

describe('user passwords', () => {
  it('when the password is exactly 19 characters, then it is refused saying at least 20 characters', () => {
    const error = refusal(userCreateSchema, validUser({ password: 'p'.repeat(19) }));
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toContain("'password'");
    expect(error.message).toContain('at least 20 characters');
  });

  it('when the password is exactly 20 characters, then it is accepted', () => {
    expect(validate<UserCreateInput>(userCreateSchema, validUser({ password: 'p'.repeat(20) })).password).toBe(
      'p'.repeat(20),
    );
  });

  it('when the password is empty, then it is refused saying at least 20 characters', () => {
    expect(refusal(userCreateSchema, validUser({ password: '' })).message).toContain('at least 20 characters');
  });

  it('when the password is 19 characters one of which is outside the BMP, then it is refused (characters, not UTF-16 units, are counted)', () => {
    // 18 ASCII + 1 emoji = 19 characters (Python's len, tastypie's rule) but 20 UTF-16 code units.
    const password = `${'p'.repeat(18)}😀`;
    expect([...password]).toHaveLength(19);
    expect(refusal(userCreateSchema, validUser({ password })).message).toContain('at least 20 characters');
  });

  it('when the password is 20 non-ASCII characters, then it is accepted', () => {
    const password = 'ü'.repeat(20);
    expect(validate<UserCreateInput>(userCreateSchema, validUser({ password })).password).toBe(password);
  });

  it('when the password contains a control character, then it is refused', () => {
    const error = refusal(userCreateSchema, validUser({ password: `${PASSWORD_20}\u0000` }));
    expect(error.message).toContain("'password'");
    expect(error.message).toContain('control characters');
  });

  it('when the password begins or ends with a space, then it is refused saying why (V1 sends it in a header); spaces inside are kept', () => {
    for (const password of [`  ${PASSWORD_20}`, `${PASSWORD_20} `]) {
      for (const schema of [userCreateSchema, userPatchSchema]) {
        const error = refusal(schema, schema === userCreateSchema ? validUser({ password }) : { password });
        expect(error.message).toBe(
          "The 'password' field must not begin or end with a space: Swift V1 clients send it in a header, which drops them.",
        );
      }
    }
    const inside = `${PASSWORD_20.slice(0, 10)}  ${PASSWORD_20.slice(10)}`;
    expect(validate<UserCreateInput>(userCreateSchema, validUser({ password: inside })).password).toBe(inside);
  });
});

describe('boolean fields from form strings', () => {
  it.each([
    ['true', true],
    ['false', false],
    ['1', true],
    ['0', false],
    ['True', true],
    ['False', false],
    [true, true],
    [false, false],
  ])('when enabled and is_superuser are %p, then they become %p', (raw, expected) => {
    const out = validate<UserCreateInput>(userCreateSchema, validUser({ enabled: raw, is_superuser: raw }));
    expect(out.enabled).toBe(expected);
    expect(out.is_superuser).toBe(expected);
  });

  it('when enabled and is_superuser are absent on create, then enabled defaults to true and is_superuser to false', () => {
    const out = validate<UserCreateInput>(userCreateSchema, validUser());
    expect(out).toEqual({
      cluster: '/api/v1/clusters/1/',
      user: 'alice',
      password: PASSWORD_20,
      enabled: true,
      is_superuser: false,
    });
  });

  it("when a boolean field is 'maybe', then it is refused naming the field", () => {
    const error = refusal(userCreateSchema, validUser({ enabled: 'maybe' }));
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toContain("'enabled'");
    expect(error.message).toContain('boolean');
  });

  it("when PATCH sends enabled 'False', then the patch holds false", () => {
    expect(validate<UserPatchInput>(userPatchSchema, { enabled: 'False' })).toEqual({ enabled: false });
  });
});

describe('unknown and read-only fields', () => {
  it('when a create body has an unknown field, then it is refused naming that field', () => {
    const error = refusal(userCreateSchema, validUser({ bogus: 1 }));
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toContain("'bogus'");
  });

  it('when an unknown field name contains markup, then the message does not reflect it as markup', () => {
    const error = refusal(userCreateSchema, validUser({ '<script>': 1 }));
    expect(error.message).not.toContain('<script>');
  });

  it.each(['id', 'cluster', 'user', 'resource_uri'])(
    'when a user PATCH sends read-only %s, then it is refused naming it',
    (field) => {
      const error = refusal(userPatchSchema, { [field]: field === 'id' ? '5' : 'x' });
      expect(error.code).toBe('INVALID_INPUT');
      expect(error.message).toContain(`'${field}'`);
      expect(error.message).toContain('read-only');
    },
  );

  it('when a user PATCH sends only a valid password, then the patch holds only the password', () => {
    expect(validate<UserPatchInput>(userPatchSchema, { password: PASSWORD_20 })).toEqual({ password: PASSWORD_20 });
  });

  it('when a user PATCH is empty, then the patch is empty (no defaults applied)', () => {
    expect(validate<UserPatchInput>(userPatchSchema, {})).toEqual({});
  });
});

describe('required fields and several problems at once', () => {
  it("when password is missing, then the message is tastypie's", () => {
    const { password: _omit, ...body } = validUser();
    const error = refusal(userCreateSchema, body);
    expect(error.message).toBe("The 'password' field has no data and doesn't allow a default or null value.");
  });

  it('when every required field is missing, then each is reported in one message', () => {
    const error = refusal(userCreateSchema, {});
    for (const field of ['cluster', 'user', 'password']) {
      expect(error.message).toContain(`The '${field}' field has no data and doesn't allow a default or null value.`);
    }
    expect(error.details.fields).toEqual(expect.arrayContaining(['cluster', 'user', 'password']));
  });

  it('when the username, the password and an unknown field are all wrong, then all three problems are reported together', () => {
    const error = refusal(userCreateSchema, validUser({ user: 'a/b', password: 'short', bogus: true }));
    expect(error.message).toContain("'user'");
    expect(error.message).toContain('at least 20 characters');
    expect(error.message).toContain("'bogus'");
    expect(error.details.fields).toEqual(expect.arrayContaining(['user', 'password', 'bogus']));
  });

  it('when the body is not an object, then it is refused as not an object of fields', () => {
    expect(refusal(userCreateSchema, ['alice']).message).toBe('The request body must be an object of fields.');
  });
});

describe('cluster create and patch', () => {
  it('when region is absent, then it defaults to RegionOne', () => {
    const out = validate<ClusterCreateInput>(clusterCreateSchema, validCluster());
    expect(out).toEqual({
      name: 'TestCluster',
      auth_url: 'https://auth.example.com/',
      storage_url: 'https://swift.example.com/v1',
      region: 'RegionOne',
    });
  });

  it.each(['not a url', 'ftp://auth.example.com/', '/relative/path', 'javascript:alert(1)'])(
    'when auth_url is %p, then it is refused saying it must be an http(s) URL',
    (authUrl) => {
      const error = refusal(clusterCreateSchema, validCluster({ auth_url: authUrl }));
      expect(error.code).toBe('INVALID_INPUT');
      expect(error.message).toContain("'auth_url'");
      expect(error.message).toContain('http://');
      expect(error.message).toContain('https://');
    },
  );

  it.each([
    ['shell command substitution', 'https://auth.example.com/auth$(id)'],
    ['backquotes', 'https://auth.example.com/`id`'],
    ['a semicolon', 'https://auth.example.com/auth;id'],
    ['a single quote', "https://auth.example.com/a'b"],
    ['a space', 'https://auth.example.com/a b'],
    ['a tab', 'https://auth.example.com/a\tb'],
    ['a newline', 'https://auth.example.com/auth\nid'],
    ['a leading space', ' https://auth.example.com/auth'],
    ['a user name and password', 'https://user:secret@auth.example.com/auth'],
    ['a user name', 'https://user@auth.example.com/auth'],
    ['a query', 'https://auth.example.com/auth?x=1'],
    ['a fragment', 'https://auth.example.com/auth#x'],
    ['a backslash', 'https://auth.example.com\\auth'],
    ['an upper-case host the parser would change', 'https://Auth.Example.com/auth'],
    ['a dot segment the parser would remove', 'https://auth.example.com/a/../auth'],
    ['no host', 'http:///auth'],
  ])(
    'when a cluster URL holds %s, then it is refused with a sentence, as auth_url and as storage_url, on create and on PATCH',
    (_what, url) => {
      for (const field of ['auth_url', 'storage_url']) {
        for (const error of [
          refusal(clusterCreateSchema, validCluster({ [field]: url })),
          refusal(clusterPatchSchema, { [field]: url }),
        ]) {
          expect(error.code).toBe('INVALID_INPUT');
          expect(error.message).toMatch(new RegExp(`^The '${field}' field must be an http:// or https:// URL .*\\.$`));
        }
      }
    },
  );

  it.each([
    'https://auth.example.com',
    'https://auth.example.com/auth',
    'http://127.0.0.1:5000/auth',
    'http://[::1]:5000/auth/',
    'https://swift.example.com/v1',
    'https://auth.example.com/%7Eops/auth',
    'http://swift-proxy.internal:8080/v1',
  ])('when a cluster URL is %p, then it is accepted as written', (url) => {
    expect(
      validate<ClusterCreateInput>(clusterCreateSchema, validCluster({ auth_url: url, storage_url: url })),
    ).toMatchObject({ auth_url: url, storage_url: url });
  });

  it('when storage_url is missing, then the tastypie missing-field message names it', () => {
    const { storage_url: _omit, ...body } = validCluster();
    expect(refusal(clusterCreateSchema, body).message).toBe(
      "The 'storage_url' field has no data and doesn't allow a default or null value.",
    );
  });

  it.each([
    ["containing '/'", 'a/b'],
    ['containing a newline', 'a\nb'],
    ['256 characters', 'n'.repeat(256)],
  ])('when the cluster name is %s, then it is refused naming the field', (_label, name) => {
    expect(refusal(clusterCreateSchema, validCluster({ name })).message).toContain("'name'");
  });

  it('when region contains a space, then it is refused naming the field', () => {
    expect(refusal(clusterCreateSchema, validCluster({ region: 'Region One' })).message).toContain("'region'");
  });

  it('when uuid is not a UUID, then it is refused saying it must be a UUID', () => {
    const error = refusal(clusterCreateSchema, validCluster({ uuid: 'not-a-uuid' }));
    expect(error.message).toContain("'uuid'");
    expect(error.message).toContain('UUID');
  });

  it('when a cluster PATCH sends only a name, then the patch holds only the name (region is not defaulted)', () => {
    expect(validate<ClusterPatchInput>(clusterPatchSchema, { name: 'Renamed' })).toEqual({ name: 'Renamed' });
  });

  it.each(['id', 'uuid', 'resource_uri'])(
    'when a cluster PATCH sends read-only %s, then it is refused naming it',
    (field) => {
      const error = refusal(clusterPatchSchema, { [field]: 'x' });
      expect(error.message).toContain(`'${field}'`);
      expect(error.message).toContain('read-only');
    },
  );

  it('when a cluster PATCH has a bad storage_url, then it is refused naming it', () => {
    expect(refusal(clusterPatchSchema, { storage_url: 'swift.example.com' }).message).toContain("'storage_url'");
  });
});

describe('operator names', () => {
  // HOST_COMMAND_NAMES is what the audit trail uses; the message spells the same three.
  it('when the reserved names are listed, then they are the three the message names', () => {
    expect([...HOST_COMMAND_NAMES]).toEqual(['bootstrap', 'migrate', 'cli']);
  });

  it.each(['bootstrap', 'migrate', 'cli', 'CLI', 'Migrate'])(
    "when an operator would be named '%s', then it is refused: the audit trail names host commands so",
    (name) => {
      const error = refusal(operatorCreateSchema, { name, role: 'reader' });
      expect(error.message).toBe(
        "The 'name' field cannot be 'bootstrap', 'migrate' or 'cli' (in any letter case): the audit trail names commands run on the host so.",
      );
    },
  );

  it.each(['ops', 'cli-reader', 'bootstrapper', 'migrate.bot'])(
    "when an operator is named '%s', then it is accepted",
    (name) => {
      expect(validate<{ name: string }>(operatorCreateSchema, { name, role: 'reader' }).name).toBe(name);
    },
  );
});

describe('the sentences of a refusal', () => {
  it.each([
    ['a cluster id of 0', userCreateSchema, validUser({ cluster: 0 }), "The 'cluster' field must be at least 1."],
    [
      'a cluster id beyond exact integers',
      userCreateSchema,
      validUser({ cluster: 2 ** 64 }),
      "The 'cluster' field must be an integer of at most 9007199254740991.",
    ],
    [
      'a URL over 2,048 characters',
      clusterCreateSchema,
      validCluster({ auth_url: `https://a/${'x'.repeat(2100)}` }),
      "The 'auth_url' field must be at most 2048 characters long.",
    ],
    [
      'two problems',
      operatorCreateSchema,
      { name: 'x', role: 'boss', clusters: [0] },
      "The 'role' field must be one of: admin, reader. The 'clusters[0]' field must be at least 1.",
    ],
  ])(
    'when the body has %s, then the answer says so in whole sentences, not in Joi’s words',
    (_what, schema, value, message) => {
      expect(refusal(schema, value).message).toBe(message);
    },
  );

  it('when a message of Joi’s own has no full stop, then one is added, and peers are listed plainly', () => {
    const schema = Joi.object({ index: Joi.number(), name: Joi.string() }).oxor('index', 'name');
    expect(refusal(schema, { index: 1, name: 'gold' }).message).toBe('Give only one of the fields index, name.');
    expect(refusal(Joi.string().email(), 'x').message).toMatch(/\.$/);
  });
});

describe('Swift account names', () => {
  it('when a username is valid, then AUTH_<user> is a Swift account name, up to 256 characters counted as Swift counts them', () => {
    for (const user of ['a b', ' ', '100% "sure", #1?', 'ü'.repeat(251), 'u'.repeat(251), '日本', '😀'.repeat(251)]) {
      expect(usernameSchema.validate(user).error).toBeUndefined();
      expect({ user, ok: isSwiftAccountName(`AUTH_${user}`) }).toEqual({ user, ok: true });
    }
  });

  it("when a name has a '/', a control character or more than 256 characters, then it is not a Swift account name", () => {
    for (const name of [
      '',
      'AUTH_a/b',
      'AUTH_a\u0000b',
      'AUTH_a\tb',
      'AUTH_a\u0085b',
      `AUTH_${'u'.repeat(252)}`,
      'AUTH_\ud800',
    ]) {
      expect({ name, ok: isSwiftAccountName(name) }).toEqual({ name, ok: false });
    }
  });
});

describe('validate() and the messages it renders', () => {
  it('when a schema has its own message for a code the common messages also cover, then its own is used', () => {
    expect(() => validate(apiKeySchema, 'short')).toThrow('An API key must be at least 32 characters.');
    expect(() => validate(operatorNameSchema.required().label('name'), '')).toThrow(
      "The 'name' field must be 1 to 64 characters of letters, digits, _ . @ -.",
    );
  });

  it('when the same schema validates many values, then each gets its own answer (the prepared schema is reused)', () => {
    expect(validate(userCreateSchema, { cluster: 1, user: 'a', password: 'p'.repeat(20) })).toMatchObject({
      is_superuser: false,
      enabled: true,
    });
    expect(() => validate(userCreateSchema, { cluster: 1, user: 'a' })).toThrow(
      "The 'password' field has no data and doesn't allow a default or null value.",
    );
    expect(
      validate(userCreateSchema, { cluster: 1, user: 'b', password: 'q'.repeat(20), is_superuser: '1' }),
    ).toMatchObject({ user: 'b', is_superuser: true });
  });
});
