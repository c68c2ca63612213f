import { CSRF_HEADER, jsonOf, request, type Me } from './api';

/**
 * The console's sign-in: the operator's key opens a session on the server (POST session/) and is
 * then dropped; the browser holds only an HttpOnly cookie that no script can read, and this tab's
 * memory holds the session's CSRF token. Nothing goes to sessionStorage, localStorage or a URL.
 */
export interface ConsoleSession {
  operator: Me;
  csrf_token: string;
  expires_at: string;
  idle_timeout: number;
}

/** The session the cookie names, or null (none, or it has ended). */
export async function currentSession(): Promise<ConsoleSession | null> {
  const s = await jsonOf<{ operator: Me | null } & Partial<ConsoleSession>>(await request('GET', 'session/'));
  return s.operator && s.csrf_token ? (s as ConsoleSession) : null;
}

export async function openSession(operator: string, key: string): Promise<ConsoleSession> {
  return jsonOf<ConsoleSession>(
    await request('POST', 'session/', { headers: { Authorization: `ApiKey ${operator}:${key}` } }),
  );
}

/**
 * Step-up: the operator types the key again before the API mints lasting credentials; it is sent
 * once, in the body, and dropped. The session may then mint for a few minutes.
 */
export async function stepUp(csrfToken: string, key: string): Promise<void> {
  await jsonOf<unknown>(
    await request('POST', 'session/step_up/', { body: { api_key: key }, headers: { [CSRF_HEADER]: csrfToken } }),
  );
}

/** Ends the session on the server; an already ended one (401) is fine. */
export async function closeSession(csrfToken: string): Promise<void> {
  const res = await request('DELETE', 'session/', { headers: { [CSRF_HEADER]: csrfToken } });
  if (res.status !== 401) await jsonOf<void>(res);
}
