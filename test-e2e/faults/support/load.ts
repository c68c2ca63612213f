import { ADMIN_AUTH } from './services';
import { Recorder, type Outcome } from './client';

/**
 * A steady, bounded load on both services, with a ledger of what each answer promised, so the
 * database and the token store can be checked against it afterwards.
 *
 * - management API workers: create a user, log it in at the gateway, disable it (PATCH), delete
 *   every other one, list users; one request at a time each.
 * - gateway workers: V1, V2 and V3 logins of their own user, validations of their live tokens,
 *   revocations of the oldest.
 */
export const PASSWORD = 'faults-password-0123456789';

/** A fact the server may have acknowledged: yes, no, or unknown (no answer came). */
export type Known = boolean | 'unknown';

export interface UserLedger {
  name: string;
  id?: string;
  create: Outcome;
  /** Should the row exist now. */
  exists: Known;
  /** Should it be enabled (when it exists). */
  enabled: Known;
}

export type TokenState = 'live' | 'revoked' | 'unknown';

export interface TokenLedger {
  token: string;
  user: string;
  state: TokenState;
  /** What revoked it: the gateway's DELETE, the user's PATCH or DELETE at the management API. */
  how?: string;
}

/** What an answer means for a fact: acknowledged, refused, or unknown when no answer came. */
const verdict = (o: Outcome): Known => (o.ok ? true : o.status === 0 ? 'unknown' : false);

export interface LoadOptions {
  apiUrl: string;
  gatewayUrl: string;
  apiWorkers: number;
  gatewayWorkers: number;
  /** Users (password PASSWORD) the gateway workers log in as, one each. */
  gatewayUsers: string[];
  /** A superuser's token, as a Swift proxy's service token, for validations and revocations. */
  serviceToken: string;
  /** Pause between a worker's iterations. */
  pauseMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const JSON_HEADERS = { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' };

export class Load {
  readonly rec = new Recorder();
  readonly users: UserLedger[] = [];
  readonly tokens: TokenLedger[] = [];
  private running = false;
  private workers: Promise<void>[] = [];
  private readonly prefix = `u${Date.now().toString(36)}`;

  constructor(private readonly o: LoadOptions) {}

  start(): void {
    this.running = true;
    for (let i = 0; i < this.o.apiWorkers; i++) this.workers.push(this.apiWorker(i));
    for (let i = 0; i < this.o.gatewayWorkers; i++)
      this.workers.push(this.gatewayWorker(this.o.gatewayUsers[i % this.o.gatewayUsers.length]!));
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.workers);
    this.workers = [];
  }

  // --- gateway calls -------------------------------------------------------------------------

  async loginV3(user: string, password = PASSWORD): Promise<string | null> {
    const o = await this.rec.call(
      'gateway',
      'v3 login',
      `${this.o.gatewayUrl}/auth/v3/auth/tokens`,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          auth: {
            identity: {
              methods: ['password'],
              password: { user: { name: user, domain: { id: 'default' }, password } },
            },
          },
        }),
      },
      [201],
    );
    return o.ok ? o.headers!.get('x-subject-token') : null;
  }

  private async loginV1(user: string): Promise<string | null> {
    const o = await this.rec.call(
      'gateway',
      'v1 login',
      `${this.o.gatewayUrl}/auth/v1.0`,
      { headers: { 'X-Auth-User': user, 'X-Auth-Key': PASSWORD } },
      [200],
    );
    return o.ok ? o.headers!.get('x-auth-token') : null;
  }

  private async loginV2(user: string): Promise<void> {
    await this.rec.call(
      'gateway',
      'v2 login',
      `${this.o.gatewayUrl}/auth/v2.0/tokens`,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ auth: { passwordCredentials: { username: user, password: PASSWORD } } }),
      },
      [200],
    );
  }

  /** Validates as a Swift proxy would; `expect` is the status a healthy gateway gives. */
  validate(token: string, expect: 200 | 404, op = 'validate'): Promise<Outcome> {
    return this.rec.call(
      'gateway',
      op,
      `${this.o.gatewayUrl}/auth/v3/auth/tokens?nocatalog`,
      { headers: { 'X-Auth-Token': this.o.serviceToken, 'X-Subject-Token': token } },
      [expect],
    );
  }

  private revoke(token: string): Promise<Outcome> {
    return this.rec.call(
      'gateway',
      'revoke',
      `${this.o.gatewayUrl}/auth/v3/auth/tokens`,
      { method: 'DELETE', headers: { 'X-Auth-Token': this.o.serviceToken, 'X-Subject-Token': token } },
      [204],
    );
  }

  private async gatewayWorker(user: string): Promise<void> {
    const mine: TokenLedger[] = [];
    const keep = (token: string | null) => {
      // A V1 login is handed the user's live V1 token again (as tempauth does): one ledger entry per token.
      if (!token || mine.some((t) => t.token === token)) return;
      const t: TokenLedger = { token, user, state: 'live' };
      mine.push(t);
      this.tokens.push(t);
    };
    while (this.running) {
      keep(await this.loginV1(user));
      await this.loginV2(user);
      keep(await this.loginV3(user));
      const live = mine.filter((t) => t.state === 'live');
      if (live.length > 0) await this.validate(live[Math.floor(Math.random() * live.length)]!.token, 200);
      // Revoke the oldest live token once a few have piled up.
      if (live.length > 4) {
        const victim = live[0]!;
        const o = await this.revoke(victim.token);
        // A refused revocation may still happen: its command can reach a hung Redis after the
        // gateway gave up waiting (a late revocation errs on the safe side). Unknown, then.
        if (o.ok) Object.assign(victim, { state: 'revoked', how: 'gateway DELETE answered 204' });
        else victim.state = 'unknown';
      }
      await sleep(this.o.pauseMs);
    }
  }

  // --- management API calls ------------------------------------------------------------------

  private api(op: string, method: string, path: string, ok: number[], body?: unknown): Promise<Outcome> {
    return this.rec.call(
      'api',
      op,
      `${this.o.apiUrl}${path}`,
      { method, headers: JSON_HEADERS, body: body === undefined ? undefined : JSON.stringify(body) },
      ok,
    );
  }

  private async apiWorker(worker: number): Promise<void> {
    for (let n = 0; this.running; n++) {
      const name = `${this.prefix}-w${worker}-${n}`;
      const create = await this.api('create user', 'POST', '/api/v1/users/', [201], {
        cluster: '/api/v1/clusters/1/',
        user: name,
        password: PASSWORD,
      });
      const ledger: UserLedger = { name, create, exists: verdict(create), enabled: true };
      this.users.push(ledger);
      if (create.ok) {
        ledger.id = String((JSON.parse(create.body) as { id: string }).id);
        const token = await this.loginV3(name);
        const t: TokenLedger | null = token ? { token, user: name, state: 'live' } : null;
        if (t) this.tokens.push(t);
        const revokeAll = (state: TokenState, how: string) =>
          t && t.state !== 'revoked' && Object.assign(t, { state, how });

        const patch = await this.api('disable user', 'PATCH', `/api/v1/users/${ledger.id}/`, [202], { enabled: false });
        // Refused: still enabled. Acknowledged: disabled, and its tokens are void. No answer: either.
        ledger.enabled = patch.ok ? false : patch.status === 0 ? 'unknown' : ledger.enabled;
        if (patch.ok) revokeAll('revoked', 'user disabled (PATCH answered 202)');
        else if (patch.status === 0) revokeAll('unknown', 'PATCH without an answer');

        if (n % 2 === 0) {
          const del = await this.api('delete user', 'DELETE', `/api/v1/users/${ledger.id}`, [204]);
          const deleted = verdict(del);
          ledger.exists = deleted === 'unknown' ? 'unknown' : !deleted;
          if (del.ok) revokeAll('revoked', 'user deleted (DELETE answered 204)');
        }
      }
      await this.api('list users', 'GET', '/api/v1/users/?limit=5&order_by=-id', [200]);
      await sleep(this.o.pauseMs);
    }
  }
}
