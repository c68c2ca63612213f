import type { ApplicationCredentialResource } from '@cairn/contract';
import { useState } from 'preact/hooks';
import { clusterIdOf, listAll, type StorageUser } from '../api';
import { ConfirmDeletion, ErrorText, ExpiryCell, Loading, ScrollBox, Section } from '../components';
import { canWriteCluster, useSession } from '../context';
import { useLoad } from '../hooks';
import { formatTime } from '../lib/format';

/**
 * A storage user's application credentials (`application_credentials/?user=<id>`). The user makes
 * them with its own token through the gateway (`openstack application credential create`), so the
 * console only lists them and revokes one; the secret never reaches the API.
 */
export function ApplicationCredentialsPage({ id }: { id: string }) {
  const { call, me } = useSession();
  const user = useLoad(() => call<StorageUser>('GET', `users/${id}/`), [id]);
  const credentials = useLoad(
    () =>
      listAll<ApplicationCredentialResource>(
        call,
        `application_credentials/?user=${encodeURIComponent(id)}&limit=100&order_by=created_at`,
      ),
    [id],
  );
  const [revoking, setRevoking] = useState<ApplicationCredentialResource>();
  if (user.loading && !user.data) return <Loading what="the user" />;
  if (!user.data) {
    return (
      <>
        <h1 tabIndex={-1}>Application credentials</h1>
        <ErrorText error={user.error} />
        <a href="#/users">All users</a>
      </>
    );
  }
  const u = user.data;
  const writable = canWriteCluster(me, clusterIdOf(u.cluster));
  const rows = credentials.data?.rows ?? [];
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Application credentials of {u.user}</h1>
        <a href={`#/users/${u.id}`}>User {u.user}</a>
      </div>
      <Section title="Credentials">
        <p class="hint">
          Scripts and tools (rclone, Terraform, backups) log in to the gateway with one of these instead of {u.user}'s
          password. {u.user} makes them with <code>openstack application credential create</code>. An unrestricted one's
          tokens may make further credentials. Revoking one here ends its tokens within a second.
        </p>
        {credentials.loading && !credentials.data ? <Loading what="the application credentials" /> : null}
        <ErrorText error={credentials.error} />
        {credentials.data && rows.length === 0 ? <p>{u.user} has no application credentials.</p> : null}
        {rows.length > 0 ? (
          <ScrollBox label={`Application credentials of ${u.user}`} busy={credentials.loading}>
            <table class="application-credentials">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Description</th>
                  <th scope="col">ID</th>
                  <th scope="col">Roles</th>
                  <th scope="col" title="Whether its tokens may make further application or EC2 credentials">
                    Unrestricted
                  </th>
                  <th scope="col">Access rules</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Created</th>
                  {writable ? (
                    <th scope="col" class="pin-end">
                      <span class="sr-only">Actions</span>
                    </th>
                  ) : null}
                </tr>
              </thead>
              <tbody>
                {rows.map((c) => (
                  <tr key={c.id} data-credential={c.id}>
                    <th scope="row">{c.name}</th>
                    <td class="wrap">{c.description || '—'}</td>
                    <td class="wrap">
                      <code>{c.id}</code>
                    </td>
                    <td>{c.roles.join(', ') || 'none'}</td>
                    <td>{c.unrestricted ? 'yes' : 'no'}</td>
                    <td class="wrap">
                      <AccessRules credential={c} />
                    </td>
                    <ExpiryCell expiresAt={c.expires_at} wrap />
                    <td class="wrap" title={c.created_at}>
                      {formatTime(c.created_at)}
                    </td>
                    {writable ? (
                      <td class="pin-end">
                        <button
                          type="button"
                          class="danger"
                          aria-label={`Revoke application credential ${c.name}`}
                          onClick={() => setRevoking(c)}
                        >
                          Revoke
                        </button>
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollBox>
        ) : null}
        {revoking ? (
          <ConfirmRevoke
            credential={revoking}
            user={u.user}
            onDone={() => {
              setRevoking(undefined);
              credentials.reload();
            }}
          />
        ) : null}
      </Section>
    </>
  );
}

function AccessRules({ credential: c }: { credential: ApplicationCredentialResource }) {
  if (c.access_rules.length === 0) return <>whole account</>;
  return (
    <ul class="plain">
      {c.access_rules.map((r) => (
        <li key={r.id}>
          <code>
            {r.method} {r.path}
          </code>
        </li>
      ))}
    </ul>
  );
}

function ConfirmRevoke({
  credential: c,
  user,
  onDone,
}: {
  credential: ApplicationCredentialResource;
  user: string;
  onDone: () => void;
}) {
  return (
    <ConfirmDeletion
      id="confirm-revoke-appcred"
      title={`Revoke application credential ${c.name}?`}
      action="Revoke credential"
      path={`application_credentials/${c.id}/`}
      onDeleted={onDone}
      onCancel={onDone}
    >
      Logins with it are refused from then on and its tokens stop working within a second. {user} and the account's data
      are not touched.
    </ConfirmDeletion>
  );
}
