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
