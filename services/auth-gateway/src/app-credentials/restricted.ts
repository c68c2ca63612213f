import { RESELLER_ADMIN_ROLE } from '../tokens/roles';
import type { TokenRecord } from '../tokens/store';

/** Keystone's refusal of a restricted credential's token (keystone/api/users.py). */
export const RESTRICTED_MESSAGE =
  "You are not authorized to perform the requested action: Using method 'application_credential' is not allowed for managing additional application credentials.";

/** A token with access rules reaches only the object-store paths they name, never the identity API. */
export const ACCESS_RULES_MESSAGE =
  "You are not authorized to perform the requested action: this token's application credential has access rules, which allow only object-store requests.";

/**
 * Why a token may not make or remove credentials (application or EC2), or null when it may. A
 * restricted credential's token may not (Keystone's rule), nor one whose access rules limit it to
 * Swift paths: either could otherwise mint itself a credential without its limits.
 */
export function credentialManagementRefusal(caller: TokenRecord): string | null {
  const appCred = caller.applicationCredential;
  if (!appCred) return null;
  if (appCred.restricted) return RESTRICTED_MESSAGE;
  if (appCred.accessRules) return ACCESS_RULES_MESSAGE;
  return null;
}

/** Why a superuser's token from a restricted credential may not make the service's reads. */
export const RESTRICTED_SERVICE_MESSAGE =
  "You are not authorized to perform the requested action: a restricted application credential's token may not read other users' credentials or check S3 signatures; use a password or an unrestricted application credential for the proxy's service user.";

/**
 * Whether a token may make the reads only a service makes (the Swift proxy's s3token: s3tokens,
 * another user's EC2 credentials, any EC2 secret in clear): a superuser's token, but not one from
 * a restricted credential, nor one with access rules.
 */
export function readsAsService(caller: TokenRecord): boolean {
  const appCred = caller.applicationCredential;
  return caller.roles.includes(RESELLER_ADMIN_ROLE) && !appCred?.restricted && !appCred?.accessRules;
}
