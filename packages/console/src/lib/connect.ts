/** Ready-to-paste connection settings for a storage user, built from the cluster's auth URL. */

/**
 * One word for a POSIX shell, whatever it holds: always in single quotes, inside which the shell
 * reads nothing (no `$(…)`, backquotes, `$VAR`, globs, `;`, newlines); a single quote itself is
 * written as '\'' (close, an escaped quote, reopen). Every value a pasted command line carries
 * goes through it, the cluster's URLs too: they come from the database, where a row may hold
 * anything (the API checks URLs, a direct SQL write or a restored dump does not).
 */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

const base = (authUrl: string) => authUrl.replace(/\/+$/, '');

/** The gateway's endpoints, as docs/auth-gateway.md lists them. */
export function endpoints(authUrl: string): { v1: string; v2: string; v3: string } {
  const b = base(authUrl);
  return { v1: `${b}/v1.0`, v2: `${b}/v2.0`, v3: `${b}/v3` };
}

export const PASSWORD_PLACEHOLDER = '<password>';

export function connectionLines(
  authUrl: string,
  user: string,
  password = PASSWORD_PLACEHOLDER,
): { swiftV1: string; swiftV3: string; rclone: string } {
  const e = endpoints(authUrl);
  const u = shellQuote(user);
  const p = shellQuote(password);
  const v1 = shellQuote(e.v1);
  const v3 = shellQuote(e.v3);
  // rclone's config is an INI file: values run to the end of the line, no quoting.
  const remote = `cairn-${user.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  return {
    swiftV1: `swift -A ${v1} -U ${u} -K ${p} stat`,
    swiftV3:
      `swift --auth-version 3 --os-auth-url ${v3} --os-username ${u} --os-password ${p} ` +
      `--os-project-name ${u} --os-user-domain-id default --os-project-domain-id default stat`,
    rclone: [
      `[${remote}]`,
      'type = swift',
      `user = ${user}`,
      `key = ${password}`,
      `auth = ${e.v3}`,
      'auth_version = 3',
      `tenant = ${user}`,
      'domain = default',
      'tenant_domain = default',
      '',
    ].join('\n'),
  };
}

/** 32 characters from a 192-bit random value (URL-safe base64): above the API's 20-character minimum. */
export function generatePassword(random: (bytes: Uint8Array) => Uint8Array = (b) => crypto.getRandomValues(b)): string {
  const bytes = random(new Uint8Array(24));
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_');
}
