import { useState } from 'preact/hooks';
import { client, errorText, type Credentials, type Operator } from '../api';
import { ErrorText } from '../components';

/** Operator name and API key; checked against the API before anything is kept. */
export function SignIn({ onSignedIn, notice }: { onSignedIn: (c: Credentials) => void; notice?: string }) {
  const [operator, setOperator] = useState('');
  const [key, setKey] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    const creds = { operator: operator.trim(), key: key.trim() };
    try {
      await client(creds, () => {})<Operator>('GET', 'whoami/');
      onSignedIn(creds);
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <h1>Cairn console</h1>
      {notice ? <p class="notice" role="status">{notice}</p> : null}
      <form onSubmit={submit} aria-describedby={error ? 'signin-error' : undefined}>
        <label>
          Operator name
          <input name="operator" autoComplete="username" required value={operator} onInput={(e) => setOperator(e.currentTarget.value)} />
        </label>
        <label>
          API key
          {/* Hidden as typed, but not offered to a password manager: the key lives only for this session. */}
          <input name="key" type="password" autoComplete="off" required value={key} onInput={(e) => setKey(e.currentTarget.value)} />
        </label>
        <ErrorText error={error} id="signin-error" />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p class="hint">The key is kept only in this browser tab's session storage and forgotten when you sign out or close the tab.</p>
    </main>
  );
}
