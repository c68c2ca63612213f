/**
 * How ids and names are spelt in a validation answer, so that a Python 3 Swift proxy can compare
 * them with what it reads from the request.
 *
 * Python 3 WSGI (PEP 3333) keeps every string that comes from the wire as a "native string": each
 * UTF-8 byte of the request is one latin-1 character. Swift keeps the account in the path that way
 * (`/v1/AUTH_zo%C3%AB` becomes 'AUTH_zo\u00c3\u00ab'), and so are ACLs and system metadata read
 * back from its servers. keystonemiddleware's auth_token, though, copies `project.id`,
 * `user.name` and the rest of the validation answer into the WSGI environ (X-Project-Id, …) as
 * the Unicode it decoded from JSON, and Swift's keystoneauth then compares
 * `AUTH_<X-Project-Id>` with the path's account as strings: 'AUTH_zo\u00eb' never equals
 * 'AUTH_zo\u00c3\u00ab', and every request of a non-ASCII account is refused with 403.
 *
 * Validation answers therefore spell identity strings as the environ holds the request's own: the
 * UTF-8 bytes, one latin-1 character each. ASCII is unchanged, so nothing changes for ASCII names;
 * login answers (read by clients, which need only the catalog's URLs) keep the names as they are.
 */
export type Spelling = (text: string) => string;

/** Names as stored (login answers). */
export const asText: Spelling = (text) => text;

/** Names as a Python 3 WSGI native string (validation answers, read by keystonemiddleware). */
export const asWsgiString: Spelling = (text) => Buffer.from(text, 'utf8').toString('latin1');
