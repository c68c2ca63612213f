import { useEffect, useRef } from 'preact/hooks';
import { ApiError } from './api';
import { ErrorText } from './components';
import { SecretField, SubmitButton, useSecretForm } from './secret-form';
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
  useEffect(() => dialog.current?.showModal(), []);
  const form = useSecretForm({
    send: (key) => stepUp(csrfToken, key.trim()),
    done: () => onDone(true),
    handled: (err) => {
      // The session has ended meanwhile: the console signs in again, there is nothing to show here.
      if (!(err instanceof ApiError && err.status === 401)) return false;
      onEnded();
      return true;
    },
  });
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
      <form class="stack" onSubmit={form.submit}>
        <h2 id="step-up-title">Confirm with your API key</h2>
        <p>
          This makes a credential that lasts. Type the API key of {operator} again to confirm; it is checked and not
          kept.
        </p>
        <SecretField
          label="API key"
          name="step-up-key"
          autoComplete="off"
          value={form.secret}
          onInput={form.setSecret}
        />
        <ErrorText error={form.error} />
        <div class="row">
          <SubmitButton busy={form.busy} label="Confirm" busyLabel="Confirming…" />
          <button type="button" class="secondary" onClick={() => onDone(false)}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}
