import type { TokenRecord } from '../tokens/store';

/** Keystone's refusal of a restricted credential's token (keystone/api/users.py). */
export const RESTRICTED_MESSAGE =
  "You are not authorized to perform the requested action: Using method 'application_credential' is not allowed for managing additional application credentials.";

/**
 * Whether a token may make or remove credentials (application or EC2): not one from a restricted
 * application credential, whose holder could otherwise mint itself a credential without its limits.
 */
export const mayManageCredentials = (caller: TokenRecord): boolean => !caller.applicationCredential || !caller.applicationCredential.restricted;
