import type { TokenRecord } from '../tokens/store';
import { RESELLER_ADMIN_ROLE } from '../tokens/roles';

/**
 * Who may validate or revoke a token: a superuser (the Swift proxy's service user is one) or the
 * token's own user, as Keystone's identity:validate_token policy allows.
 */
export const canValidate = (caller: TokenRecord, subject: TokenRecord): boolean =>
  caller.roles.includes(RESELLER_ADMIN_ROLE) || caller.user === subject.user;
