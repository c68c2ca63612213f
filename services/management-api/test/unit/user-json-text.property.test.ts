import fc from 'fast-check';
import { toJson } from '../../src/http/serialize';
import { userJson, userJsonText } from '../../src/resources/representations';

/**
 * A list of users writes each row's JSON text directly (userJsonText) instead of building the
 * representation object and serialising it; the text must be exactly the same, whatever the data.
 */

const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
const user = fc.record({
  id: fc.bigInt({ min: 1n, max: 2n ** 63n - 1n }).map(String),
  clusterId: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  username: fc.string({ unit: anyCodeUnit, maxLength: 40 }),
  passwordScheme: fc.constantFrom('scrypt', 'bcrypt', 'pbkdf2-sha512', 'passlib-scrypt'),
  isSuperuser: fc.boolean(),
  enabled: fc.boolean(),
  quotas: fc.record({
    bytes: fc.option(fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }).map(String)),
    count: fc.option(fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }).map(String)),
    bytesPolicy: fc.option(
      fc.dictionary(
        fc.string({ unit: anyCodeUnit, minLength: 1, maxLength: 8 }),
        fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }).map(String),
      ),
    ),
    countPolicy: fc.option(
      fc.dictionary(fc.string({ unit: anyCodeUnit, minLength: 1, maxLength: 8 }), fc.nat().map(String)),
    ),
  }),
  // Absent (an audit snapshot), null (never had a quota) or a state.
  quotaState: fc.option(
    fc.option(
      fc.record({
        status: fc.constantFrom('applied' as const, 'pending' as const, 'error' as const),
        error: fc.option(fc.string({ unit: anyCodeUnit, maxLength: 30 })),
        appliedAt: fc.option(fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true })),
      }),
    ),
    { nil: undefined },
  ),
  // Absent (an audit snapshot), null (never sampled) or the latest sample.
  usage: fc.option(
    fc.option(
      fc.record({
        bytesUsed: fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }).map(String),
        objectCount: fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }).map(String),
        hour: fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }),
      }),
    ),
    { nil: undefined },
  ),
});

describe('user JSON text', () => {
  it('when any user is written as JSON text, then it equals toJson of its representation', () => {
    fc.assert(fc.property(user, (u) => expect(toJson(userJsonText(u))).toBe(toJson(userJson(u)))));
  });

  it('when a list envelope holds the texts, then it equals the envelope of the representations', () => {
    fc.assert(
      fc.property(fc.array(user, { maxLength: 5 }), (users) => {
        const meta = { limit: 20, next: null, offset: 0, previous: null, total_count: users.length };
        expect(toJson({ meta, objects: users.map(userJsonText) })).toBe(
          toJson({ meta, objects: users.map((u) => userJson(u)) }),
        );
      }),
    );
  });
});
