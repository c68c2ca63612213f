/**
 * Swift's keystoneauth makes a token's holder the owner of AUTH_<project id> when it carries an
 * operator role, and of every account when it carries the reseller admin role.
 */
export const OPERATOR_ROLE = 'swiftoperator';
export const RESELLER_ADMIN_ROLE = 'ResellerAdmin';

/**
 * Own account → swiftoperator; superusers also ResellerAdmin. A normal user asking for someone
 * else's account gets a token for it with no role at all: only container ACLs can then grant
 * access, never ownership.
 */
export function rolesFor(user: { username: string; isSuperuser: boolean }, project: string | undefined): string[] {
  if (project === undefined) return [];
  const roles: string[] = [];
  if (project === user.username) roles.push(OPERATOR_ROLE);
  if (user.isSuperuser) roles.push(RESELLER_ADMIN_ROLE);
  return roles;
}
