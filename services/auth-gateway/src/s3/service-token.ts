import type { IncomingMessage } from 'node:http';
import type { TokenService } from '../tokens/service';
import type { TokenRecord } from '../tokens/store';
import { RESELLER_ADMIN_ROLE } from '../tokens/roles';
import { header } from '../http/endpoints';

export type ServiceCaller = { ok: true; caller: TokenRecord } | { ok: false; status: 401 | 403 };

/**
 * The caller of a service call (s3tokens; reading any user's EC2 credentials): X-Auth-Token must
 * be a valid token of a superuser, the role a Swift proxy's service user holds (ResellerAdmin),
 * as Keystone's policy asks for the admin or service role. 401 without a valid token, 403 with
 * one of a normal user.
 */
export async function serviceCaller(tokens: TokenService, req: IncomingMessage): Promise<ServiceCaller> {
  const caller = await tokens.validate(header(req, 'x-auth-token'));
  if (!caller) return { ok: false, status: 401 };
  if (!caller.roles.includes(RESELLER_ADMIN_ROLE)) return { ok: false, status: 403 };
  return { ok: true, caller };
}
