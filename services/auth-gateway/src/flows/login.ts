import type { Deps } from '../deps';
import { isValidProjectName } from '../credentials/logins';
import type { AuthVersion } from '../http/metrics';
import type { IssuedToken } from '../tokens/service';
import { authenticateApplicationCredential, type ApplicationCredentialIdentity } from '../app-credentials/login';

/** A password login as every protocol asks for it, once its request is parsed. */
export interface PasswordLogin {
  username: string;
  password: string;
  /** The project (Swift account) the token is for; undefined for an unscoped token. */
  project: string | undefined;
  /** Whom the per-address failure limits count (req.ip). */
  clientAddress: string | undefined;
  userDomain: string;
  projectDomain?: string;
  /**
   * V1 only: the account of `<account>:<username>`, which may name a user imported from tempauth
   * whose tempauth name is `username` (credentials/logins.ts, PasswordCredential); that user then
   * logs in.
   */
  tempauthAccount?: string;
}

/** How a login ended; each protocol renders it its own way (V1 headers, V2 and V3 documents). */
export type LoginOutcome =
  | { ok: true; token: IssuedToken }
  /** Unknown or disabled user, wrong password, or a project no user can have: indistinguishable on purpose. */
  | { ok: false; refusal: 'invalid' }
  /** Past a failed-login limit: answer 429 with Retry-After. */
  | { ok: false; refusal: 'limited'; retryAfterSeconds: number; message: string };

/** V3's `application_credential` method: the token is for the credential's user on its own account. */
export interface ApplicationCredentialLogin {
  method: 'application_credential';
  identity: ApplicationCredentialIdentity;
  /** Whom the per-address failure limits count (req.ip), as for passwords. */
  clientAddress: string | undefined;
  userDomain: string;
}

export type LoginFlow = (login: PasswordLogin | ApplicationCredentialLogin) => Promise<LoginOutcome>;

/**
 * The one login sequence of V1, V2 and V3: authenticate (under the failed-login limits, see
 * LoginService), check the project's name, issue the token, count the outcome under `version`.
 */
export function loginFlow(
  deps: Pick<Deps, 'logins' | 'tokens' | 'metrics' | 'appCredentials'>,
  version: AuthVersion,
): LoginFlow {
  return async (login) => {
    if ('method' in login) {
      // Authenticated by the credential's secret, under the same failed-login limits as passwords;
      // scoped, as Keystone binds it, to its user's project.
      const result = await authenticateApplicationCredential(
        deps.logins,
        deps.appCredentials,
        login.identity,
        login.clientAddress,
        Date.now(),
      );
      if (!result.ok) {
        deps.metrics.refused(version, result.reason === 'limited' ? 'rate_limited' : 'invalid_credentials');
        return result.reason === 'limited'
          ? { ok: false, refusal: 'limited', retryAfterSeconds: result.retryAfterSeconds, message: result.message }
          : { ok: false, refusal: 'invalid' };
      }
      const token = await deps.tokens.issue({
        user: result.user,
        project: result.user.username,
        methods: ['application_credential'],
        userDomain: login.userDomain,
        applicationCredential: result.issue,
      });
      deps.metrics.issued(version);
      return { ok: true, token };
    }
    const { username, password, project, clientAddress, userDomain, projectDomain, tempauthAccount } = login;
    const result = await deps.logins.login(username, password, clientAddress, tempauthAccount);
    if (!result.ok) {
      deps.metrics.refused(version, result.reason === 'limited' ? 'rate_limited' : 'invalid_credentials');
      return result.reason === 'limited'
        ? { ok: false, refusal: 'limited', retryAfterSeconds: result.retryAfterSeconds, message: result.message }
        : { ok: false, refusal: 'invalid' };
    }
    if (project !== undefined && !isValidProjectName(project)) {
      deps.metrics.refused(version, 'scope_refused');
      return { ok: false, refusal: 'invalid' };
    }
    // V1 logins get the live token of the same user and scope again, as tempauth hands it out.
    const token = await deps.tokens.issue({
      user: result.user,
      project,
      methods: ['password'],
      userDomain,
      projectDomain,
      reuse: version === 'v1',
    });
    deps.metrics.issued(version);
    return { ok: true, token };
  };
}
