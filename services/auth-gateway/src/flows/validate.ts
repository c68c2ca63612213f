import type { IncomingMessage } from 'node:http';
import type { Deps } from '../deps';
import { validateOnce } from '../tokens/per-request';
import type { KeystoneVersion, ValidationResult } from '../http/metrics';
import { canValidate } from './validation-policy';
import type { TokenRecord } from '../tokens/store';

/** How a validation ended: the subject's record when `valid`. */
export type ValidationOutcome =
  { result: 'valid'; subjectId: string; subject: TokenRecord } | { result: Exclude<ValidationResult, 'valid'> };

export interface TokenCheck {
  /** The request the tokens came with: each is validated once per request (tokens/per-request.ts). */
  request: IncomingMessage;
  callerToken: string | undefined;
  subjectToken: string | undefined;
  /** V2.0 has no unscoped tokens: an unscoped subject is not found there. */
  scopedOnly?: boolean;
  /** Revocation shares the checks but is no validation: it is not counted. */
  count?: boolean;
  /**
   * Whether the caller enforces access rules (keystonemiddleware says so with
   * `OpenStack-Identity-Access-Rules`). A token with access rules is not found by a caller that
   * does not, as Keystone answers: a proxy that ignored the rules would grant the whole account.
   */
  accessRulesSupported?: boolean;
}

export type ValidationFlow = (check: TokenCheck) => Promise<ValidationOutcome>;

/**
 * The one validation sequence of V2 and V3 (and of revocation): the caller's token must be valid,
 * then the subject's, then the caller may see it (validation-policy.ts); counted under `version`.
 */
export function validationFlow(deps: Pick<Deps, 'tokens' | 'metrics'>, version: KeystoneVersion): ValidationFlow {
  return async ({
    request,
    callerToken,
    subjectToken,
    scopedOnly = false,
    count = true,
    accessRulesSupported = false,
  }) => {
    const outcome = await decide();
    if (count) deps.metrics.validated(version, outcome.result);
    return outcome;

    async function decide(): Promise<ValidationOutcome> {
      // Both looked up in the same tick, so their Redis reads share round trips (ioredis's
      // auto-pipelining); a bad caller token still decides the answer before the subject's.
      const [caller, subject] = await Promise.all([
        validateOnce(deps.tokens, request, callerToken),
        validateOnce(deps.tokens, request, subjectToken),
      ]);
      if (!caller) return { result: 'caller_unauthorized' };
      if (!subject || !subjectToken || (scopedOnly && subject.project === undefined)) return { result: 'not_found' };
      if (subject.applicationCredential?.accessRules && !accessRulesSupported) return { result: 'not_found' };
      if (!canValidate(caller, subject)) return { result: 'forbidden' };
      return { result: 'valid', subjectId: subjectToken, subject };
    }
  };
}
