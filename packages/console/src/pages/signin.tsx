import { useEffect, useState } from 'preact/hooks';
import { errorText } from '../api';
import { ErrorText } from '../components';
import { titleFor } from '../hooks';
import { openSession, type ConsoleSession } from '../session';

/** Operator name and API key, traded at once for a session; the key is not kept anywhere. */
export function SignIn({ onSignedIn, notice }: { onSignedIn: (s: ConsoleSession) => void; notice?: string }) {
  const [operator, setOperator] = useState('');
  const [key, setKey] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    document.title = titleFor('Sign in');
  }, []);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const session = await openSession(operator.trim(), key.trim());
      setKey('');
      onSignedIn(session);
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <h1>Cairn console</h1>
      {notice ? (
        <p class="notice" role="status">
          {notice}
        </p>
      ) : null}
      <form onSubmit={submit} aria-describedby={error ? 'signin-error' : undefined}>
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
        <label>
          API key
          {/* Hidden as typed, but not offered to a password manager: the key lives only for this session. */}
          <input
            name="key"
            type="password"
            autoComplete="off"
            required
            value={key}
            onInput={(e) => setKey(e.currentTarget.value)}
          />
        </label>
        <ErrorText error={error} id="signin-error" />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p class="hint">
        The key opens a session and is not kept: the browser holds only a cookie no script can read. The session ends
        when you sign out, when it has been idle or open too long, or when the key is revoked.
      </p>
    </main>
  );
}
