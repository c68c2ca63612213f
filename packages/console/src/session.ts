import type { Credentials } from './api';

/**
 * The operator's name and key live in sessionStorage only: gone when the tab closes, never in a
 * cookie (nothing sends them implicitly), never in the URL.
 */
const KEY = 'cairn.console.credentials';

export function loadCredentials(): Credentials | null {
  try {
    const raw = sessionStorage.getItem(KEY);
    const c = raw ? (JSON.parse(raw) as Partial<Credentials>) : null;
    return c && typeof c.operator === 'string' && typeof c.key === 'string' ? { operator: c.operator, key: c.key } : null;
  } catch {
    return null;
  }
}

export function saveCredentials(c: Credentials): void {
  sessionStorage.setItem(KEY, JSON.stringify(c));
}

export function forgetCredentials(): void {
  sessionStorage.removeItem(KEY);
}
