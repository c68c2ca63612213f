import { useEffect, useState } from 'preact/hooks';
import { ErrorText } from '../components';
import { titleFor } from '../hooks';
import { SecretField, SubmitButton, useSecretForm } from '../secret-form';
import { openStorageSession, openStorageSessionWithCredential, type StorageSession } from '../self-session';
import { openSession, type ConsoleSession } from '../session';

type Who = 'operator' | 'storage';
type How = 'password' | 'credential';

/**
 * The console's sign-in, for operators (name and API key) or storage users (cluster, then user name
 * and password or an application credential's id and secret, checked by the cluster's auth
 * gateway); either is traded at once for a session, and
 * the key or password is not kept anywhere.
 */
export function SignIn({
  onSignedIn,
  onStorageSignedIn,
  notice,
}: {
  onSignedIn: (s: ConsoleSession) => void;
  onStorageSignedIn: (s: StorageSession) => void;
  notice?: string;
}) {
  const [who, setWho] = useState<Who>('operator');
  return (
    <main class="signin">
      <h1>Cairn console</h1>
      {notice ? (
        <p class="notice" role="status">
          {notice}
        </p>
      ) : null}
      <fieldset class="who-choice">
        <legend>Sign in as</legend>
        <label>
          <input type="radio" name="who" checked={who === 'operator'} onChange={() => setWho('operator')} />
          Operator
        </label>
        <label>
          <input type="radio" name="who" checked={who === 'storage'} onChange={() => setWho('storage')} />
          Storage user
        </label>
      </fieldset>
      {who === 'operator' ? (
        <OperatorSignIn onSignedIn={onSignedIn} />
      ) : (
        <StorageUserSignIn onSignedIn={onStorageSignedIn} />
      )}
    </main>
  );
}

/**
 * A storage user's cluster and either its name and password or an application credential's id and
 * secret; the password or secret goes once to the API and is dropped.
 */
function StorageUserSignIn({ onSignedIn }: { onSignedIn: (s: StorageSession) => void }) {
  const [how, setHow] = useState<How>('password');
  const [cluster, setCluster] = useState('');
  const [user, setUser] = useState('');
  const [credentialId, setCredentialId] = useState('');
  const form = useSecretForm({
    send: (secret) =>
      how === 'password'
        ? openStorageSession(cluster.trim(), user.trim(), secret)
        : openStorageSessionWithCredential(cluster.trim(), credentialId.trim(), secret),
    done: onSignedIn,
  });
  return (
    <>
      <form onSubmit={form.submit} aria-describedby={form.error ? 'signin-error' : undefined}>
        <label>
          Cluster
          <input name="cluster" required value={cluster} onInput={(e) => setCluster(e.currentTarget.value)} />
        </label>
        {how === 'password' ? (
          <>
            <label>
              User name
              <input
                name="user"
                autoComplete="username"
                required
                value={user}
                onInput={(e) => setUser(e.currentTarget.value)}
              />
            </label>
            <SecretField
              label="Password"
              name="password"
              autoComplete="current-password"
              value={form.secret}
              onInput={form.setSecret}
            />
          </>
        ) : (
          <>
            <label>
              Credential ID
              <input
                name="application_credential_id"
                autoComplete="off"
                required
                value={credentialId}
                onInput={(e) => setCredentialId(e.currentTarget.value)}
              />
            </label>
            <SecretField
              label="Credential secret"
              name="application_credential_secret"
              autoComplete="off"
              value={form.secret}
              onInput={form.setSecret}
            />
          </>
        )}
        <ErrorText error={form.error} id="signin-error" />
        <SubmitButton busy={form.busy} label="Sign in" busyLabel="Signing in…" />
      </form>
      {/* A button, not a second radio group: the choice is rare, and the form stays one question long. */}
      <button type="button" class="how-choice" onClick={() => setHow(how === 'password' ? 'credential' : 'password')}>
        {how === 'password' ? 'Use an application credential instead' : 'Use your user name and password instead'}
      </button>
      <p class="hint">
        {how === 'password'
          ? "Your storage account's own password, as your Swift or S3 tools use it."
          : 'An application credential made under My keys (its ID and the secret shown when it was made). A restricted one (as every one made there is) may not make or delete keys; one with access rules cannot sign in here.'}{' '}
        The browser keeps only a cookie no script can read; the session ends when you sign out, when it has been idle or
        open too long, or when an operator changes or disables your user.
      </p>
    </>
  );
}

/** Operator name and API key, traded at once for a session; the key is not kept anywhere. */
function OperatorSignIn({ onSignedIn }: { onSignedIn: (s: ConsoleSession) => void }) {
  const [operator, setOperator] = useState('');
  const form = useSecretForm({ send: (key) => openSession(operator.trim(), key.trim()), done: onSignedIn });
  useEffect(() => {
    document.title = titleFor('Sign in');
  }, []);
  return (
    <>
      <form onSubmit={form.submit} aria-describedby={form.error ? 'signin-error' : undefined}>
        <label>
          Operator name
          <input
            name="operator"
            autoComplete="username"
            required
            value={operator}
            onInput={(e) => setOperator(e.currentTarget.value)}
          />
        </label>
        <SecretField label="API key" name="key" autoComplete="off" value={form.secret} onInput={form.setSecret} />
        <ErrorText error={form.error} id="signin-error" />
        <SubmitButton busy={form.busy} label="Sign in" busyLabel="Signing in…" />
      </form>
      <p class="hint">
        The key opens a session and is not kept: the browser holds only a cookie no script can read. The session ends
        when you sign out, when it has been idle or open too long, or when the key is revoked.
      </p>
    </>
  );
}
