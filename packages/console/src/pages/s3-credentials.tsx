import { useState } from 'preact/hooks';
import { clusterIdOf, errorText, listAll, type S3Credential, type StorageUser } from '../api';
import { ConfirmDeletion, ErrorText, ExpiryCell, Loading, ScrollBox, Section, ShownOnce } from '../components';
import { canWriteCluster, useSession } from '../context';
import { useLoad } from '../hooks';
import { expiryFromLocalInput, isExpired } from '../lib/expiry';
import { formatTime } from '../lib/format';

/**
 * A storage user's S3 credentials (`s3_credentials/?user=<id>`): the access keys with their
 * expiry (expired ones marked: the gateway refuses them), a new one, optionally expiring, with
 * its secret shown once (the API keeps it sealed and never shows it again), and deleting one.
 */
export function S3CredentialsPage({ id }: { id: string }) {
  const { call, me } = useSession();
  const user = useLoad(() => call<StorageUser>('GET', `users/${id}/`), [id]);
  const credentials = useLoad(
    () => listAll<S3Credential>(call, `s3_credentials/?user=${encodeURIComponent(id)}&limit=100&order_by=id`),
    [id],
  );
  const [shown, setShown] = useState<S3Credential>();
  const [deleting, setDeleting] = useState<S3Credential>();
  const [error, setError] = useState<string>();
  const [expiry, setExpiry] = useState('');
  if (user.loading && !user.data) return <Loading what="the user" />;
  if (!user.data) {
    return (
      <>
        <h1 tabIndex={-1}>S3 credentials</h1>
        <ErrorText error={user.error} />
        <a href="#/users">All users</a>
      </>
    );
  }
  const u = user.data;
  const writable = canWriteCluster(me, clusterIdOf(u.cluster));
  const create = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    const expires_at = expiryFromLocalInput(expiry);
    // The API says what it takes for a bad date; only what no browser sends is stopped here.
    if (expires_at === undefined)
      return setError('The expiry must be a date and time, or empty for a credential that never expires.');
    try {
      setShown(
        await call<S3Credential>('POST', 's3_credentials/', {
          user: u.resource_uri,
          ...(expires_at ? { expires_at } : {}),
        }),
      );
      setExpiry('');
      credentials.reload();
    } catch (err) {
      setError(errorText(err));
    }
  };
  const now = new Date();
  const rows = credentials.data?.rows ?? [];
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>S3 credentials of {u.user}</h1>
        <a href={`#/users/${u.id}`}>User {u.user}</a>
      </div>
      <Section title="Access keys">
        <p class="hint">
          S3 clients sign requests with an access key and its secret; they reach the Swift account{' '}
          <code>AUTH_{u.user}</code>.
        </p>
        {writable && !shown ? (
          <form class="row filters" onSubmit={create}>
            <label>
              Expires (your local time; empty: never)
              <input
                name="expires_at"
                type="datetime-local"
                value={expiry}
                onInput={(e) => setExpiry((e.target as HTMLInputElement).value)}
              />
            </label>
            <button type="submit">New S3 credential</button>
          </form>
        ) : null}
        <ErrorText error={error} />
        {shown?.secret ? (
          <>
            <p>
              Access key <code>{shown.access_key}</code>
            </p>
            <ShownOnce
              title={`Secret of ${shown.access_key}`}
              value={shown.secret}
              onDone={() => setShown(undefined)}
            />
          </>
        ) : null}
        {credentials.loading && !credentials.data ? <Loading what="the S3 credentials" /> : null}
        <ErrorText error={credentials.error} />
        {credentials.data && rows.length === 0 ? <p>{u.user} has no S3 credentials.</p> : null}
        {rows.length > 0 ? (
          <ScrollBox label={`S3 credentials of ${u.user}`} busy={credentials.loading}>
            <table class="s3-credentials">
              <thead>
                <tr>
                  <th scope="col">Access key</th>
                  <th scope="col">Created</th>
                  <th scope="col">Expires</th>
                  {writable ? (
                    <th scope="col" class="pin-end">
                      <span class="sr-only">Actions</span>
                    </th>
                  ) : null}
                </tr>
              </thead>
              <tbody>
                {rows.map((c) => (
                  <tr key={c.id} class={isExpired(c.expires_at, now) ? 'expired' : undefined}>
                    <td>
                      <code>{c.access_key}</code>
                      {c.application_credential ? (
                        <>
                          {' '}
                          <span
                            class="badge"
                            title="Made with an application credential's token: it has that credential's roles and ends with it"
                          >
                            application credential
                          </span>
                        </>
                      ) : null}
                    </td>
                    <td title={c.created_at}>{formatTime(c.created_at)}</td>
                    <ExpiryCell expiresAt={c.expires_at} now={now} />
                    {writable ? (
                      <td class="pin-end">
                        <button
                          type="button"
                          class="danger"
                          aria-label={`Delete S3 credential ${c.access_key}`}
                          onClick={() => setDeleting(c)}
                        >
                          Delete
                        </button>
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollBox>
        ) : null}
        {deleting ? (
          <ConfirmDelete
            credential={deleting}
            onDone={() => {
              setDeleting(undefined);
              credentials.reload();
            }}
          />
        ) : null}
      </Section>
    </>
  );
}

function ConfirmDelete({ credential: c, onDone }: { credential: S3Credential; onDone: () => void }) {
  return (
    <ConfirmDeletion
      id="confirm-delete-s3"
      title={`Delete S3 credential ${c.access_key}?`}
      action="Delete credential"
      path={`s3_credentials/${c.id}/`}
      onDeleted={onDone}
      onCancel={onDone}
    >
      S3 clients using this access key are refused from then on. The account's data stays.
    </ConfirmDeletion>
  );
}
