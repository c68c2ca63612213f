import type { IncomingMessage } from 'node:http';
import type { TokenService } from '../tokens/service';
import type { TokenRecord } from '../tokens/store';
import { RESELLER_ADMIN_ROLE } from '../tokens/roles';
import { readsAsService } from '../app-credentials/restricted';
import { validateOnce } from '../tokens/per-request';
import { header } from '../http/endpoints';

export type ServiceCaller =
  | { ok: true; caller: TokenRecord }
  | { ok: false; status: 401 }
  /** `restricted`: a superuser's token, but from a restricted application credential. */
  | { ok: false; status: 403; restricted: boolean };

/**
 * The caller of a service call (s3tokens; reading any user's EC2 credentials): X-Auth-Token must
 * be a valid token of a superuser, the role a Swift proxy's service user holds (ResellerAdmin),
 * as Keystone's policy asks for the admin or service role, and not one from a restricted
 * application credential (readsAsService). 401 without a valid token, 403 with any other.
 */
export async function serviceCaller(tokens: TokenService, req: IncomingMessage): Promise<ServiceCaller> {
  const caller = await validateOnce(tokens, req, header(req, 'x-auth-token'));
  if (!caller) return { ok: false, status: 401 };
  if (!readsAsService(caller))
    return { ok: false, status: 403, restricted: caller.roles.includes(RESELLER_ADMIN_ROLE) };
  return { ok: true, caller };
}
