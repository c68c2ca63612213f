import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { client, downloadCsv, errorText, listAll, type Call, type Cluster, type Me, type Operator } from './api';
import { ErrorText, Loading } from './components';
import { isGlobalAdmin, SessionContext, type Session } from './context';
import { useRoute, useTitleFromHeading } from './hooks';
import { ApplicationCredentialsPage } from './pages/application-credentials';
import { AuditPage } from './pages/audit';
import { CapacityPage } from './pages/capacity';
import { HealthPage } from './pages/health';
import { ClustersPage } from './pages/clusters';
import { OperatorsPage } from './pages/operators';
import { Lazy } from './lazy';
import { SignIn } from './pages/signin';
import { S3CredentialsPage } from './pages/s3-credentials';
import { UserPage } from './pages/user';
import { UsersPage } from './pages/users';
import { closeSession, currentSession, type ConsoleSession } from './session';
import { StorageUserShell } from './self-app';
import { currentStorageSession, type StorageSession } from './self-session';
import { StepUpDialog } from './step-up';

export function App() {
  // undefined: still asking the API whether the cookie names a session.
  const [session, setSession] = useState<ConsoleSession | null>();
  // A storage user's session (self-service), asked for alongside an operator's.
  const [storage, setStorage] = useState<StorageSession | null>(null);
  const [notice, setNotice] = useState<string>();
  useEffect(() => {
    Promise.all([currentSession(), currentStorageSession()]).then(
      ([operator, user]) => {
        setStorage(operator ? null : user);
        setSession(operator);
      },
      (e: unknown) => {
        setNotice(errorText(e));
        setSession(null);
      },
    );
  }, []);
  const signOut = useCallback((why?: string) => {
    setSession(null);
    setStorage(null);
    setNotice(why);
  }, []);
  if (session === undefined)
    return (
      <main class="signin">
        <Loading what="your session" />
      </main>
    );
  if (!session && storage) return <StorageUserShell session={storage} signOut={signOut} />;
  if (!session) {
    return (
      <SignIn
        notice={notice}
        onSignedIn={(s) => {
          setNotice(undefined);
          setSession(s);
        }}
        onStorageSignedIn={(s) => {
          setNotice(undefined);
          setStorage(s);
        }}
      />
    );
  }
  return <SignedIn session={session} signOut={signOut} />;
}

const ENDED =
  'Your session has ended (idle too long, signed out elsewhere, or its API key was revoked); sign in again.';

function SignedIn({ session: signedIn, signOut }: { session: ConsoleSession; signOut: (why?: string) => void }) {
  // The step-up dialog's answer, while it is open; writes that need it meanwhile share it.
  const [asking, setAsking] = useState<(confirmed: boolean) => void>();
  const pending = useRef<Promise<boolean> | undefined>(undefined);
  const confirmKey = useCallback(() => {
    pending.current ??= new Promise<boolean>((resolve) =>
      setAsking(() => (confirmed: boolean) => {
        pending.current = undefined;
        setAsking(undefined);
        resolve(confirmed);
      }),
    );
    return pending.current;
  }, []);
  const call: Call = useMemo(
    () => client(signedIn.csrf_token, () => signOut(ENDED), confirmKey),
    [signedIn, signOut, confirmKey],
  );
  const [me, setMe] = useState<Me>();
  const [clusters, setClusters] = useState<Cluster[]>();
  const [error, setError] = useState<string>();
  const [tick, setTick] = useState(0);
  useEffect(() => {
    Promise.all([call<Me>('GET', 'whoami/'), listAll<Cluster>(call, 'clusters/?limit=1000&order_by=name')]).then(
      ([m, c]) => {
        setMe(m);
        setClusters(c.rows);
      },
      (e: unknown) => setError(errorText(e)),
    );
  }, [call, tick]);
  const reloadClusters = useCallback(() => setTick((t) => t + 1), []);
  // Sign-out ends the session on the server first; the cookie is useless from then on.
  const signOutNow = useCallback(() => {
    closeSession(signedIn.csrf_token).then(
      () => signOut(),
      (e: unknown) => setError(errorText(e)),
    );
  }, [signedIn, signOut]);
  if (error) {
    return (
      <main class="page">
        <h1>Cairn console</h1>
        <ErrorText error={error} />
        <div class="row">
          <button type="button" onClick={() => (setError(undefined), setTick((t) => t + 1))}>
            Try again
          </button>
          <button type="button" class="secondary" onClick={signOutNow}>
            Sign out
          </button>
        </div>
      </main>
    );
  }
  if (!me || !clusters)
    return (
      <main class="page">
        <Loading what="your session" />
      </main>
    );
  const session: Session = { call, me, clusters, reloadClusters, signOut, download: downloadCsv };
  return (
    <SessionContext.Provider value={session}>
      <Shell me={me} signOut={signOutNow} />
      {asking ? (
        <StepUpDialog
          operator={me.name}
          csrfToken={signedIn.csrf_token}
          onDone={asking}
          onEnded={() => {
            asking(false);
            signOut(ENDED);
          }}
        />
      ) : null}
    </SessionContext.Provider>
  );
}

const NAV: Array<{ path: string; label: string; globalAdmin?: boolean }> = [
  { path: '/clusters', label: 'Clusters' },
  { path: '/users', label: 'Users' },
  { path: '/operators', label: 'Operators', globalAdmin: true },
  { path: '/audit', label: 'Audit trail', globalAdmin: true },
];

function Shell({ me, signOut }: { me: Operator; signOut: () => void }) {
  const route = useRoute();
  const section = `/${route.path.split('/')[1] ?? ''}`;
  useTitleFromHeading(() => document.getElementById('main'));
  useEffect(() => {
    // A new page: move focus to its heading so keyboard and screen-reader users start there.
    document.querySelector<HTMLElement>('main h1')?.focus();
  }, [route.path]);
  return (
    <>
      <a
        class="skip"
        href="#main"
        onClick={(e) => {
          e.preventDefault();
          document.querySelector<HTMLElement>('main h1')?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Cairn</span>
        <nav aria-label="Main">
          {NAV.filter((n) => !n.globalAdmin || isGlobalAdmin(me)).map((n) => (
            <a href={`#${n.path}`} aria-current={section === n.path ? 'page' : undefined}>
              {n.label}
            </a>
          ))}
        </nav>
        <span class="who">
          {me.name} <span class="badge">{me.role}</span>
          {me.clusters.length > 0 ? <span class="badge">limited</span> : null}
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        </span>
      </header>
      <main class="page" id="main">
        {/* Keyed by the path: another page, or the same page of another user (#/users/5 → #/users/6),
            is a new component, so nothing it held stays: no once-shown secret (a new password, an S3
            secret, an API key), no open form, no figures of the previous user. */}
        <Page key={route.path} path={route.path} params={route.params} me={me} />
      </main>
    </>
  );
}

/** The utilization page and its chart library load only when it is first opened. */
const loadUtilization = () => import('./pages/utilization').then((m) => m.UtilizationPage);

function Page({ path, params, me }: { path: string; params: URLSearchParams; me: Operator }) {
  let m: RegExpExecArray | null;
  if (path === '/clusters' || path === '/') return <ClustersPage />;
  if ((m = /^\/clusters\/(\d+)\/capacity$/.exec(path)))
    return <CapacityPage clusterId={Number(m[1])} params={params} />;
  if ((m = /^\/clusters\/(\d+)\/health$/.exec(path))) return <HealthPage clusterId={Number(m[1])} />;
  if ((m = /^\/clusters\/(\d+)\/utilization$/.exec(path)))
    return <Lazy load={loadUtilization} props={{ clusterId: Number(m[1]), params }} />;
  if (path === '/users') return <UsersPage params={params} />;
  if ((m = /^\/users\/(\d+)$/.exec(path))) return <UserPage id={m[1]!} />;
  if ((m = /^\/users\/(\d+)\/s3$/.exec(path))) return <S3CredentialsPage id={m[1]!} />;
  if ((m = /^\/users\/(\d+)\/application-credentials$/.exec(path))) return <ApplicationCredentialsPage id={m[1]!} />;
  if (path === '/operators' && isGlobalAdmin(me)) return <OperatorsPage />;
  if (path === '/audit' && isGlobalAdmin(me)) return <AuditPage params={params} />;
  return (
    <>
      <h1 tabIndex={-1}>Not found</h1>
      <p>
        Nothing here. <a href="#/clusters">Back to the clusters</a>.
      </p>
    </>
  );
}
