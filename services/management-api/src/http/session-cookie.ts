import type { CookieOptions, Request, Response } from 'express';

/** The console's session cookie: HttpOnly (no script reads it), SameSite=Strict, the whole origin. */
export const SESSION_COOKIE = 'cairn_console_session';

/**
 * A storage user's console session (routes/self.ts): another cookie, so that the operators'
 * authentication never even reads it, with the same flags.
 */
export const STORAGE_SESSION_COOKIE = 'cairn_storage_session';

/** The header a cookie-authenticated write must carry, holding the session's CSRF token. */
export const CSRF_HEADER = 'X-Cairn-CSRF';

/** The session id from the Cookie header, if there is one (no cookie library: one name is read). */
export function sessionIdOf(req: Request, name = SESSION_COOKIE): string | undefined {
  const header = req.get('cookie');
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * `Secure` whenever the request reached the API over TLS: its own socket, or the trusted proxy's
 * X-Forwarded-Proto (express's req.secure honours it only for CAIRN_TRUST_PROXY's addresses).
 * No Max-Age: the browser forgets the cookie when it closes; the server ends the session sooner.
 */
const options = (req: Request): CookieOptions => ({
  httpOnly: true,
  secure: req.secure,
  sameSite: 'strict',
  path: '/',
});

export function setSessionCookie(req: Request, res: Response, sessionId: string, name = SESSION_COOKIE): void {
  res.cookie(name, sessionId, options(req));
}

export function clearSessionCookie(req: Request, res: Response, name = SESSION_COOKIE): void {
  res.clearCookie(name, options(req));
}
