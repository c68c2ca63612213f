import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, errorText } from './api';
import { ErrorText } from './components';
import { stepUp } from './session';

/**
 * Asked when the API will mint lasting credentials (an API key, an operator, more power for one)
 * only once the operator has typed the key again: a script that got into the page has the
 * session, not the key. A modal dialog; Escape or Cancel does nothing. The key is sent once and
 * dropped, as at sign-in.
 */
export function StepUpDialog({
  operator,
  csrfToken,
  onDone,
  onEnded,
}: {
  operator: string;
  csrfToken: string;
  onDone: (confirmed: boolean) => void;
  onEnded: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [key, setKey] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  useEffect(() => dialog.current?.showModal(), []);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await stepUp(csrfToken, key.trim());
      setKey('');
      onDone(true);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return onEnded();
      setError(errorText(err));
      setBusy(false);
    }
  };
  return (
    <dialog
      ref={dialog}
      class="step-up"
      aria-labelledby="step-up-title"
      onCancel={(e) => {
        e.preventDefault();
        onDone(false);
      }}
    >
      <form class="stack" onSubmit={submit}>
        <h2 id="step-up-title">Confirm with your API key</h2>
        <p>
          This makes a credential that lasts. Type the API key of {operator} again to confirm; it is checked and not
          kept.
        </p>
        <label>
          API key
          <input
            name="step-up-key"
            type="password"
            autoComplete="off"
            required
            value={key}
            onInput={(e) => setKey(e.currentTarget.value)}
          />
        </label>
        <ErrorText error={error} />
        <div class="row">
          <button type="submit" disabled={busy}>
            {busy ? 'Confirming…' : 'Confirm'}
          </button>
          <button type="button" class="secondary" onClick={() => onDone(false)}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}
