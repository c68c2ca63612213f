import type { ComponentChildren } from 'preact';
import { useContext, useState } from 'preact/hooks';
import { errorText, type Call } from './api';
import { SessionContext } from './context';
import { formatExpiry, isExpired } from './lib/expiry';

export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

/** An API error, placed next to the control or section it concerns. */
export function ErrorText({ error, id }: { error?: string; id?: string }) {
  if (!error) return null;
  return (
    <p class="error" role="alert" id={id}>
      {error}
    </p>
  );
}

/** A table's header: the column that names each row, then right-aligned columns of numbers. */
export function TableHead({ row, nums }: { row: string; nums: string[] }) {
  return (
    <thead>
      <tr>
        <th scope="col">{row}</th>
        {nums.map((n) => (
          <th scope="col" class="num">
            {n}
          </th>
        ))}
      </tr>
    </thead>
  );
}

/** Copies `text`; where the Clipboard API is unavailable (plain http), says so instead. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
    setTimeout(() => setState('idle'), 2000);
  };
  return (
    <button type="button" class="copy" onClick={copy} aria-label={`Copy ${label}`}>
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Select and copy' : 'Copy'}
    </button>
  );
}

/** A value shown with its copy button, e.g. an endpoint or a one-time secret. */
export function Copyable({ value, label, secret }: { value: string; label: string; secret?: boolean }) {
  return (
    <span class={secret ? 'copyable secret' : 'copyable'}>
      <code>{value}</code> <CopyButton text={value} label={label} />
    </span>
  );
}

export function Section({
  title,
  children,
  actions,
}: {
  title: string;
  children: ComponentChildren;
  actions?: ComponentChildren;
}) {
  return (
    <section class="card">
      <div class="card-head">
        <h2>{title}</h2>
        {actions}
      </div>
      {children}
    </section>
  );
}

/** A secret the API shows once (a password, an API key): copy it now, it cannot be shown again. */
export function ShownOnce({ title, value, onDone }: { title: string; value: string; onDone: () => void }) {
  return (
    <div class="shown-once" role="status">
      <p>
        <strong>{title}</strong> — shown only now; copy it before closing this note.
      </p>
      <Copyable value={value} label={title} secret />
      <p>
        <button type="button" onClick={onDone}>
          Done
        </button>
      </p>
    </div>
  );
}

/** A box that scrolls sideways on narrow screens; focusable so the keyboard can scroll it too. */
export function ScrollBox({ label, busy, children }: { label: string; busy?: boolean; children: ComponentChildren }) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={label} aria-busy={busy}>
      {children}
    </div>
  );
}

/**
 * A confirmation for something that cannot be undone: what happens, then the one button that does
 * it (focused, so Enter confirms and Tab reaches Cancel) and Cancel.
 */
export function Confirm({
  id,
  title,
  children,
  action,
  onConfirm,
  onCancel,
  error,
}: {
  id: string;
  title: string;
  children: ComponentChildren;
  action: string;
  onConfirm: () => void;
  onCancel: () => void;
  error?: string;
}) {
  return (
    <div class="confirm" role="alertdialog" aria-labelledby={`${id}-title`} aria-describedby={`${id}-text`}>
      <p id={`${id}-title`}>
        <strong>{title}</strong>
      </p>
      <p id={`${id}-text`}>{children}</p>
      <ErrorText error={error} />
      <div class="row">
        <button type="button" class="danger" onClick={onConfirm} ref={(b) => b?.focus()}>
          {action}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}

/**
 * A Confirm that deletes `path` (under /api/v1/) when confirmed: `onDeleted` runs once the API
 * has answered, and a refusal stays in the dialog as the API's sentence.
 */
export function ConfirmDeletion({
  path,
  onDeleted,
  call: given,
  ...confirm
}: Omit<Parameters<typeof Confirm>[0], 'onConfirm' | 'error'> & {
  path: string;
  onDeleted: () => void;
  /** The client to delete with; by default the operator's session's (a storage user's page passes its own). */
  call?: Call;
}) {
  const session = useContext(SessionContext);
  const call = given ?? session?.call;
  if (!call) throw new Error('ConfirmDeletion needs a call outside a signed-in page');
  const [error, setError] = useState<string>();
  const remove = async () => {
    setError(undefined);
    try {
      await call('DELETE', path);
      onDeleted();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return <Confirm {...confirm} onConfirm={remove} error={error} />;
}

/** A credential's expiry as a table cell: when it ends ("never" for no time), marked once past. */
export function ExpiryCell({ expiresAt, now, wrap }: { expiresAt: string | null; now?: Date; wrap?: boolean }) {
  return (
    <td class={wrap ? 'wrap' : undefined} title={expiresAt ?? undefined}>
      {formatExpiry(expiresAt, now)}
      {isExpired(expiresAt, now) ? (
        <>
          {' '}
          <span class="badge off">expired</span>
        </>
      ) : null}
    </td>
  );
}
