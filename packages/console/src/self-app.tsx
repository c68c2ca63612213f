import { useCallback, useEffect, useMemo } from 'preact/hooks';
import { client, errorText } from './api';
import { titleFor } from './hooks';
import { Lazy } from './lazy';
import { closeStorageSession, type StorageSession } from './self-session';

const ENDED =
  'Your session has ended (idle too long, signed out elsewhere, or your user was changed or disabled); sign in again.';

/** "My storage" and its chart library load only once a storage user has signed in. */
const loadMyStorage = () => import('./pages/my-storage').then((m) => m.MyStoragePage);

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
  useEffect(() => {
    document.title = titleFor('My storage');
  }, []);
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
          <a href="#/my-storage" aria-current="page">
            My storage
          </a>
        </nav>
        <span class="who">
          {session.user} <span class="badge">{session.cluster}</span>
          <button type="button" onClick={signOutNow}>
            Sign out
          </button>
        </span>
      </header>
      <main class="page" id="main">
        <Lazy load={loadMyStorage} props={{ call }} />
      </main>
    </>
  );
}
