import type { Request } from 'express';

/** A Host header we are willing to echo into a URL: a DNS name, IPv4 or [IPv6], optional port. */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** The /auth root as the client reached it, when no public URL is configured. */
function requestedAuthRoot(req: Request): string {
  const forwarded = req.get('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
  const proto = forwarded === 'http' || forwarded === 'https' ? forwarded : req.protocol;
  const given = req.get('host');
  let host: string;
  if (given && HOST.test(given)) {
    host = given;
  } else {
    const address = req.socket.localAddress ?? '127.0.0.1';
    host = `${address.includes(':') ? `[${address}]` : address}:${req.socket.localPort ?? ''}`;
  }
  return `${proto}://${host}/auth`;
}

/** Public URL of the gateway's /auth root, without a trailing slash. */
export function authRoot(req: Request, configured: string | undefined): string {
  return configured ?? requestedAuthRoot(req);
}
