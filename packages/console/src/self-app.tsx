import { useCallback, useEffect, useMemo } from 'preact/hooks';
import { client, errorText } from './api';
import { titleFor, useRoute } from './hooks';
import { Lazy } from './lazy';
import { closeStorageSession, type StorageSession } from './self-session';

const ENDED =
  'Your session has ended (idle too long, signed out elsewhere, your user was changed or disabled, or your application credential was deleted or expired); sign in again.';

/** "My storage" and its chart library load only once a storage user has signed in. */
const loadMyStorage = () => import('./pages/my-storage').then((m) => m.MyStoragePage);
const loadMyKeys = () => import('./pages/my-keys').then((m) => m.MyKeysPage);
const loadSharing = () => import('./pages/sharing').then((m) => m.SharingPage);

const PAGES = [
  { path: '/my-storage', title: 'My storage' },
  { path: '/my-keys', title: 'My keys' },
  { path: '/sharing', title: 'Sharing' },
] as const;

/**
 * The console as a storage user sees it: its own account only (the API refuses this session
 * everywhere but /api/v1/self/), so none of the operators' pages or navigation is here.
 */
export function StorageUserShell({ session, signOut }: { session: StorageSession; signOut: (why?: string) => void }) {
  const call = useMemo(
    () =>
      client(
        session.csrf_token,
        () => signOut(ENDED),
        async () => false,
      ),
    [session, signOut],
  );
  // Each page is its own component: leaving one drops its state, a secret it showed once included.
  const route = useRoute();
  const page = PAGES.find((p) => p.path === route.path) ?? PAGES[0];
  useEffect(() => {
    document.title = titleFor(page.title);
  }, [page]);
  const signOutNow = useCallback(() => {
    closeStorageSession(session.csrf_token).then(
      () => signOut(),
      (e: unknown) => signOut(errorText(e)),
    );
  }, [session, signOut]);
  return (
    <>
      <header class="top">
        <span class="brand">Cairn</span>
        <nav aria-label="Main">
          {PAGES.map((p) => (
            <a key={p.path} href={`#${p.path}`} aria-current={p === page ? 'page' : undefined}>
              {p.title}
            </a>
          ))}
        </nav>
        <span class="who">
          {session.user} <span class="badge">{session.cluster}</span>
          <button type="button" onClick={signOutNow}>
            Sign out
          </button>
        </span>
      </header>
      <main class="page" id="main">
        {page.path === '/my-keys' ? (
          <Lazy key="keys" load={loadMyKeys} props={{ call, session }} />
        ) : page.path === '/sharing' ? (
          <Lazy key="sharing" load={loadSharing} props={{ call, session }} />
        ) : (
          <Lazy key="storage" load={loadMyStorage} props={{ call }} />
        )}
      </main>
    </>
  );
}
