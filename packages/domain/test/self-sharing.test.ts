import { execFileSync } from 'node:child_process';
import {
  containerAclSchema,
  formatContainerAcl,
  parseContainerAcl,
  tempUrlKeyActionSchema,
  tempUrlOf,
  tempUrlRequestSchema,
  tempUrlSignature,
} from '../src';

describe('container ACLs as keystoneauth reads them', () => {
  it('when a header holds public read, listings, users and foreign entries, then each lands in its choice and the rest is kept', () => {
    expect(parseContainerAcl('.r:*, .rlistings,bob:bob,carol:*,ops-role,.r:example.com,other:dave')).toEqual({
      users: ['bob', 'carol'],
      publicRead: true,
      listings: true,
      other: ['ops-role', '.r:example.com', 'other:dave'],
    });
  });

  it('when there is no header, then nothing is shared', () => {
    expect(parseContainerAcl(null)).toEqual({ users: [], publicRead: false, listings: false, other: [] });
    expect(parseContainerAcl('')).toEqual({ users: [], publicRead: false, listings: false, other: [] });
  });

  it("when choices are formatted, then users are written project:user (the gateway's ids are the names) and read back the same", () => {
    const acl = { users: ['bob', 'a,b c', 'zoë'], publicRead: true, listings: true, other: ['ops-role'] };
    const header = formatContainerAcl(acl);
    expect(header).toBe('.r:*,.rlistings,bob:bob,a%2Cb%20c:a%2Cb%20c,zo%C3%AB:zo%C3%AB,ops-role');
    expect(parseContainerAcl(header)).toEqual(acl);
  });

  it('when nothing is chosen, then the header is empty (the ACL is removed)', () => {
    expect(formatContainerAcl({ users: [], publicRead: false, listings: false, other: [] })).toBe('');
  });

  it('when public listings are asked without public read, then the body is refused with a sentence', () => {
    const { error } = containerAclSchema.validate({ public_listings: true });
    expect(error?.message).toMatch(/works only with public read/);
    expect(containerAclSchema.validate({ public_read: true, public_listings: true }).error).toBeUndefined();
  });

  it('when the lists are empty, then the body is valid (nobody else may use the container)', () => {
    expect(
      containerAclSchema.validate({ read_users: [], write_users: [], public_read: false, public_listings: false })
        .error,
    ).toBeUndefined();
  });

  it('when users are named twice or with a slash, then the body is refused', () => {
    expect(containerAclSchema.validate({ read_users: ['bob', 'bob'] }).error?.message).toMatch(/same user twice/);
    expect(containerAclSchema.validate({ write_users: ['a/b'] }).error).toBeDefined();
  });
});

describe("temporary URLs as Swift's tempurl checks them", () => {
  it("when the docs' example is signed, then the signature is the one Swift's tempurl documentation gives", () => {
    expect(tempUrlSignature('mykey', 'GET', 1512508563, '/v1/AUTH_account/container/object')).toBe(
      '732fcac368abb10c78a4cbe95c3fab7f311584532bf779abd5074e13cbe8b88b',
    );
  });

  it("when a name has spaces and non-ASCII, then the signature is Python's hmac over the decoded path and the URL is encoded", () => {
    const path = '/v1/AUTH_bob/my files/dir/ünï code?.txt';
    const python = execFileSync(
      '/usr/bin/python3',
      [
        '-c',
        'import sys, hmac; from hashlib import sha256; print(hmac.new(sys.argv[1].encode(), ("PUT\\n1700000000\\n" + sys.argv[2]).encode(), sha256).hexdigest())',
        'clé',
        path,
      ],
      { encoding: 'utf8' },
    ).trim();
    expect(tempUrlSignature('clé', 'PUT', 1700000000, path)).toBe(python);
    expect(
      tempUrlOf('http://swift:8080/v1/', 'AUTH_bob', 'my files', 'dir/ünï code?.txt', 'PUT', 1700000000, 'clé'),
    ).toBe(
      `http://swift:8080/v1/AUTH_bob/my%20files/dir/%C3%BCn%C3%AF%20code%3F.txt?temp_url_sig=${python}&temp_url_expires=1700000000`,
    );
  });

  it('when a request names no lifetime, a method Swift does not sign here or a slash in the container, then it is refused', () => {
    expect(tempUrlRequestSchema.validate({ container: 'c', object: 'o' }).error?.message).toMatch(/lifetime_seconds/);
    expect(
      tempUrlRequestSchema.validate({ container: 'c', object: 'o', method: 'DELETE', lifetime_seconds: 5 }).error
        ?.message,
    ).toMatch(/GET \(download\)/);
    expect(
      tempUrlRequestSchema.validate({ container: 'a/b', object: 'o', lifetime_seconds: 5 }).error?.message,
    ).toMatch(/no "\/"/);
    expect(tempUrlRequestSchema.validate({ container: 'c', object: 'o', lifetime_seconds: 0 }).error?.message).toMatch(
      /at least 1/,
    );
    expect(tempUrlRequestSchema.validate({ container: 'c', object: 'o', lifetime_seconds: 5 }).value.method).toBe(
      'GET',
    );
  });

  it('when a key action is unknown, then the sentence names the three there are', () => {
    expect(tempUrlKeyActionSchema.validate({ action: 'steal' }).error?.message).toMatch(
      /'set'.*'rotate'.*'drop_previous'/,
    );
  });
});
