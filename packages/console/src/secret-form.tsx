import { useState } from 'preact/hooks';
import { errorText } from './api';

/**
 * A form that sends a secret (an API key or a password) once: sign-in, for operators and storage
 * users, and the step-up dialog. While it is sent the button says so and is disabled; a refusal
 * shows the API's sentence; once accepted the secret is dropped from state at once, so that it
 * lives no longer than the request.
 */
export function useSecretForm<T>({
  send,
  done,
  handled,
}: {
  send: (secret: string) => Promise<T>;
  done: (result: T) => void;
  /** Whether the caller took care of this error itself (the form then stays as it is). */
  handled?: (err: unknown) => boolean;
}) {
  const [secret, setSecret] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const result = await send(secret);
      setSecret('');
      done(result);
    } catch (err) {
      if (handled?.(err)) return;
      setError(errorText(err));
      setBusy(false);
    }
  };
  return { secret, setSecret, error, busy, submit };
}

/**
 * The secret's field, hidden as typed. An API key is not offered to a password manager
 * (autoComplete off: it lives only for the session); a storage user's password is.
 */
export function SecretField({
  label,
  name,
  autoComplete,
  value,
  onInput,
}: {
  label: string;
  name: string;
  autoComplete: 'off' | 'current-password';
  value: string;
  onInput: (value: string) => void;
}) {
  return (
    <label>
      {label}
      <input
        name={name}
        type="password"
        autoComplete={autoComplete}
        required
        value={value}
        onInput={(e) => onInput(e.currentTarget.value)}
      />
    </label>
  );
}

/** The form's submit button, which says what it is doing (and is disabled) while busy. */
export function SubmitButton({ busy, label, busyLabel }: { busy: boolean; label: string; busyLabel: string }) {
  return (
    <button type="submit" disabled={busy}>
      {busy ? busyLabel : label}
    </button>
  );
}
