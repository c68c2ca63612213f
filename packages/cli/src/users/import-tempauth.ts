import { parseIni, sectionItems } from '@cairn/swift-cluster';
import { PASSWORD_MIN_LENGTH } from '@cairn/domain';
import type { ImportInput } from './import-input';

/**
 * tempauth's users, from a Swift proxy-server.conf: `user_<account>_<user> = <key> [group]...
 * [storage_url]` (and `user64_<b64 account>_<b64 user>` for names with '_' or other characters),
 * read as Swift's tempauth reads them (swift/common/middleware/tempauth.py, through paste.deploy,
 * which keeps the case of option names): the option name split
 * at '_' into exactly account and user, the value split at whitespace, a last word with '://' or
 * '$HOST' taken as the storage URL.
 *
 * A Cairn user owns exactly one account, AUTH_<its name>. So an account with exactly one user
 * becomes a Cairn user named after the account (its data stays reachable), with the key as its
 * password and the tempauth user name recorded, so that V1 clients keep logging in as
 * `<account>:<user>`; `.reseller_admin` makes it a superuser. An account with several users is refused, each
 * user with the reason: which of them should own the account is the operator's decision.
 */
export function parseTempauth(text: string): ImportInput {
  const ini = parseIni(text, { keepKeyCase: true });
  const section = [...ini.sections.keys()].find(
    (name) => sectionItems(ini, name).get('use')?.trim() === 'egg:swift#tempauth',
  );
  if (!section) throw new Error('no tempauth filter in this file (a section with use = egg:swift#tempauth).');
  const out: ImportInput = { records: [], refused: [] };
  const accounts = new Map<string, Array<{ where: string; user: string; key: string; groups: string[] }>>();
  for (const [option, value] of sectionItems(ini, section)) {
    const where = `[${section}] ${option}`;
    const m = /^(user|user64)_(.*)$/.exec(option);
    if (!m) continue;
    const parts = m[2]!.split('_');
    if (parts.length !== 2) {
      out.refused.push({
        where,
        reason: "tempauth needs exactly one '_' between account and user (user64_ for names that hold '_').",
      });
      continue;
    }
    let [account, user] = parts as [string, string];
    if (m[1] === 'user64') {
      // tempauth pads what the config file could not hold.
      account = Buffer.from(account, 'base64').toString('utf8');
      user = Buffer.from(user, 'base64').toString('utf8');
    }
    const words = value.split(/\s+/).filter(Boolean);
    const key = words.shift();
    if (key === undefined) {
      out.refused.push({ where, reason: 'no key set.' });
      continue;
    }
    if (words.length > 0 && /:\/\/|\$HOST/.test(words[words.length - 1]!)) words.pop();
    const list = accounts.get(account) ?? [];
    list.push({ where, user, key, groups: words });
    accounts.set(account, list);
  }
  for (const [account, users] of accounts) {
    if (users.length > 1) {
      const names = users.map((u) => u.user).join(', ');
      for (const u of users) {
        out.refused.push({
          where: u.where,
          reason: `account '${account}' has ${users.length} users (${names}); a Cairn user owns exactly one account (AUTH_${account}), so create the one that should own it by hand and give the others container ACLs.`,
        });
      }
      continue;
    }
    const [u] = users as [{ where: string; user: string; key: string; groups: string[] }];
    if ([...u.key].length < PASSWORD_MIN_LENGTH) {
      out.refused.push({
        where: u.where,
        reason: `the key of ${account}:${u.user} is shorter than ${PASSWORD_MIN_LENGTH} characters, Cairn's minimum for a password; create the user '${account}' with a new password instead.`,
      });
      continue;
    }
    out.records.push({
      where: u.where,
      fields: {
        user: account,
        password: u.key,
        is_superuser: u.groups.includes('.reseller_admin'),
        enabled: true,
        // V1 clients keep logging in as `<account>:<user>`, as they did with tempauth.
        tempauth_user: u.user,
      },
    });
  }
  return out;
}
