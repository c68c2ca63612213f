import { useEffect, useState } from 'preact/hooks';
import { errorText, type Call } from '../api';
import { ConfirmDeletion, ErrorText, ExpiryCell, Loading, ScrollBox, Section, ShownOnce } from '../components';
import { useLoad } from '../hooks';
import { expiryFromLocalInput, isExpired } from '../lib/expiry';
import type { MyApplicationCredential, MyS3Credential, StorageSession } from '../self-session';

const METHODS = ['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'PATCH'] as const;

/** One row of the access rule editor: a method on a container itself or on its objects under a prefix. */
interface RuleDraft {
  method: (typeof METHODS)[number];
  container: string;
  target: 'objects' | 'container';
  prefix: string;
}

/** keystonemiddleware reads `*`, `**` and `{…}` in a rule's path as globs: a name with them is not literal. */
const GLOB = /[*{}]/;

/**
 * The Keystone access rule a draft stands for, or a sentence saying what is wrong with it. Objects
 * under a prefix: `/v1/AUTH_<user>/<container>/<prefix>**` (`**` matches the rest of any object
 * name); the container itself (its listing, HEAD, metadata): `/v1/AUTH_<user>/<container>`.
 */
export function accessRuleOf(
  account: string,
  d: RuleDraft,
): { service: 'object-store'; method: string; path: string } | string {
  if (d.container === '') return 'Each rule needs a container.';
  if (d.container.includes('/')) return `A container name has no '/': '${d.container}'.`;
  if (GLOB.test(d.container) || GLOB.test(d.prefix))
    return "A container or prefix in a rule cannot hold '*', '{' or '}' (the gateway's rules read them as patterns).";
  const path =
    d.target === 'container' ? `/v1/${account}/${d.container}` : `/v1/${account}/${d.container}/${d.prefix}**`;
  return { service: 'object-store', method: d.method, path };
}

const newRule = (): RuleDraft => ({ method: 'GET', container: '', target: 'objects', prefix: '' });

/**
 * "My keys": the signed-in storage user's own S3 credentials and application credentials, made,
 * listed and deleted through the cluster's gateway (the API calls it as the user). A new secret is
 * shown once, in this page's state only: leaving the page drops it.
 */
export function MyKeysPage({ call, session }: { call: Call; session: StorageSession }) {
  useEffect(() => {
    document.querySelector<HTMLElement>('main h1')?.focus();
  }, []);
  return (
    <>
      <h1 tabIndex={-1}>My keys</h1>
      <S3Keys call={call} session={session} />
      <ApplicationCredentials call={call} session={session} />
    </>
  );
}

function S3Keys({ call, session }: { call: Call; session: StorageSession }) {
  const keys = useLoad(() => call<{ objects: MyS3Credential[] }>('GET', 'self/s3_credentials/'), []);
  const [shown, setShown] = useState<MyS3Credential>();
  const [deleting, setDeleting] = useState<MyS3Credential>();
  const [expiry, setExpiry] = useState('');
  const [error, setError] = useState<string>();
  const create = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    const expires_at = expiryFromLocalInput(expiry);
    if (expires_at === undefined)
      return setError('The expiry must be a date and time, or empty for a key that never expires.');
    try {
      setShown(await call<MyS3Credential>('POST', 'self/s3_credentials/', expires_at ? { expires_at } : {}));
      setExpiry('');
      keys.reload();
    } catch (err) {
      setError(errorText(err));
    }
  };
  const now = new Date();
  const rows = keys.data?.objects ?? [];
  return (
    <Section title="S3 credentials">
      <p class="hint">
        S3 clients (aws, boto3, rclone's s3 backend) sign requests with an access key and its secret; they reach your
        account <code>{session.account}</code>.
      </p>
      {!shown ? (
        <form class="row filters" onSubmit={create}>
          <label>
            Expires (your local time; empty: never)
            <input
              name="s3_expires_at"
              type="datetime-local"
              value={expiry}
              onInput={(e) => setExpiry(e.currentTarget.value)}
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
          <ShownOnce title={`Secret of ${shown.access_key}`} value={shown.secret} onDone={() => setShown(undefined)} />
        </>
      ) : null}
      {keys.loading && !keys.data ? <Loading what="your S3 credentials" /> : null}
      <ErrorText error={keys.error} />
      {keys.data && rows.length === 0 ? <p>You have no S3 credentials.</p> : null}
      {rows.length > 0 ? (
        <ScrollBox label="Your S3 credentials" busy={keys.loading}>
          <table class="s3-credentials">
            <thead>
              <tr>
                <th scope="col">Access key</th>
                <th scope="col">Expires</th>
                <th scope="col" class="pin-end">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((c) => (
                <tr key={c.access_key} class={isExpired(c.expires_at, now) ? 'expired' : undefined}>
                  <td>
                    <code>{c.access_key}</code>
                  </td>
                  <ExpiryCell expiresAt={c.expires_at} now={now} />
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
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      ) : null}
      {deleting ? (
        <ConfirmDeletion
          id="confirm-delete-my-s3"
          call={call}
          title={`Delete S3 credential ${deleting.access_key}?`}
          action="Delete credential"
          path={`self/s3_credentials/${encodeURIComponent(deleting.access_key)}/`}
          onDeleted={() => {
            setDeleting(undefined);
            keys.reload();
          }}
          onCancel={() => setDeleting(undefined)}
        >
          S3 clients using this access key are refused from then on. Your data stays.
        </ConfirmDeletion>
      ) : null}
    </Section>
  );
}

function ApplicationCredentials({ call, session }: { call: Call; session: StorageSession }) {
  const list = useLoad(() => call<{ objects: MyApplicationCredential[] }>('GET', 'self/application_credentials/'), []);
  const [shown, setShown] = useState<MyApplicationCredential>();
  const [deleting, setDeleting] = useState<MyApplicationCredential>();
  const [name, setName] = useState('');
  const [expiry, setExpiry] = useState('');
  const [unrestricted, setUnrestricted] = useState(false);
  const [rules, setRules] = useState<RuleDraft[]>([]);
  const [error, setError] = useState<string>();

  const composed = rules.map((r) => accessRuleOf(session.account, r));
  const ruleProblem = composed.find((r): r is string => typeof r === 'string');
  const expires_at = expiryFromLocalInput(expiry);
  const body = {
    name,
    expires_at: expires_at ?? null,
    unrestricted,
    ...(rules.length > 0 && !ruleProblem ? { access_rules: composed } : {}),
  };
  const setRule = (i: number, change: Partial<RuleDraft>) =>
    setRules(rules.map((r, j) => (j === i ? { ...r, ...change } : r)));

  const create = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    if (expires_at === undefined)
      return setError('The expiry must be a date and time, or empty for a credential that never expires.');
    if (ruleProblem) return setError(ruleProblem);
    try {
      setShown(await call<MyApplicationCredential>('POST', 'self/application_credentials/', body));
      setName('');
      setExpiry('');
      setUnrestricted(false);
      setRules([]);
      list.reload();
    } catch (err) {
      setError(errorText(err));
    }
  };
  const now = new Date();
  const rows = list.data?.objects ?? [];
  return (
    <Section title="Application credentials">
      <p class="hint">
        A named secret for a script or a backup job instead of your password: <code>swift</code>, rclone and the{' '}
        <code>openstack</code> client log in with its id and secret (Keystone V3, <code>v3applicationcredential</code>
        ). Access rules limit its tokens to the requests they name.
      </p>
      {!shown ? (
        <form class="app-credential-form" onSubmit={create} aria-label="New application credential">
          <div class="row filters">
            <label>
              Name
              <input
                name="name"
                required
                maxLength={255}
                value={name}
                onInput={(e) => setName(e.currentTarget.value)}
              />
            </label>
            <label>
              Expires (your local time; empty: never)
              <input
                name="app_expires_at"
                type="datetime-local"
                value={expiry}
                onInput={(e) => setExpiry(e.currentTarget.value)}
              />
            </label>
            <label>
              <input
                name="unrestricted"
                type="checkbox"
                checked={unrestricted}
                onChange={(e) => setUnrestricted(e.currentTarget.checked)}
              />{' '}
              Unrestricted (its tokens may make and delete credentials)
            </label>
          </div>
          <fieldset>
            <legend>Access rules (none: any request your account allows)</legend>
            {rules.map((r, i) => (
              <div class="row filters" key={i} role="group" aria-label={`Access rule ${i + 1}`}>
                <label>
                  Method
                  <select
                    aria-label="Method"
                    value={r.method}
                    onChange={(e) => setRule(i, { method: e.currentTarget.value as RuleDraft['method'] })}
                  >
                    {METHODS.map((m) => (
                      <option key={m} value={m}>
                        {m}
                      </option>
                    ))}
                  </select>
                </label>
                <label>
                  Container
                  <input value={r.container} onInput={(e) => setRule(i, { container: e.currentTarget.value })} />
                </label>
                <label>
                  Applies to
                  <select
                    aria-label="Applies to"
                    value={r.target}
                    onChange={(e) => setRule(i, { target: e.currentTarget.value as RuleDraft['target'] })}
                  >
                    <option value="objects">its objects</option>
                    <option value="container">the container itself</option>
                  </select>
                </label>
                {r.target === 'objects' ? (
                  <label>
                    Object name prefix (empty: all)
                    <input value={r.prefix} onInput={(e) => setRule(i, { prefix: e.currentTarget.value })} />
                  </label>
                ) : null}
                <button
                  type="button"
                  class="secondary"
                  aria-label={`Remove access rule ${i + 1}`}
                  onClick={() => setRules(rules.filter((_, j) => j !== i))}
                >
                  Remove
                </button>
              </div>
            ))}
            <button type="button" class="secondary" onClick={() => setRules([...rules, newRule()])}>
              Add an access rule
            </button>
          </fieldset>
          <p class="hint">What will be sent:</p>
          <pre class="sent" aria-label="What will be sent">
            {JSON.stringify(body, null, 2)}
          </pre>
          {ruleProblem ? <ErrorText error={ruleProblem} /> : null}
          <button type="submit">New application credential</button>
        </form>
      ) : null}
      <ErrorText error={error} />
      {shown?.secret ? (
        <>
          <p>
            Application credential <strong>{shown.name}</strong>, id <code>{shown.id}</code>
          </p>
          <ShownOnce title={`Secret of ${shown.name}`} value={shown.secret} onDone={() => setShown(undefined)} />
        </>
      ) : null}
      {list.loading && !list.data ? <Loading what="your application credentials" /> : null}
      <ErrorText error={list.error} />
      {list.data && rows.length === 0 ? <p>You have no application credentials.</p> : null}
      {rows.length > 0 ? (
        <ScrollBox label="Your application credentials" busy={list.loading}>
          <table class="application-credentials">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Id</th>
                <th scope="col">Expires</th>
                <th scope="col">Restricted</th>
                <th scope="col">Access rules</th>
                <th scope="col" class="pin-end">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((c) => (
                <tr key={c.id} class={isExpired(c.expires_at, now) ? 'expired' : undefined}>
                  <td>{c.name}</td>
                  <td>
                    <code>{c.id}</code>
                  </td>
                  <ExpiryCell expiresAt={c.expires_at} now={now} />
                  <td>{c.unrestricted ? 'no' : 'yes'}</td>
                  <td class="wrap">
                    {c.access_rules.length === 0
                      ? 'none'
                      : c.access_rules.map((r) => (
                          <div key={r.id}>
                            <code>
                              {r.method} {r.path}
                            </code>
                          </div>
                        ))}
                  </td>
                  <td class="pin-end">
                    <button
                      type="button"
                      class="danger"
                      aria-label={`Delete application credential ${c.name}`}
                      onClick={() => setDeleting(c)}
                    >
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      ) : null}
      {deleting ? (
        <ConfirmDeletion
          id="confirm-delete-my-app-credential"
          call={call}
          title={`Delete application credential ${deleting.name}?`}
          action="Delete credential"
          path={`self/application_credentials/${encodeURIComponent(deleting.id)}/`}
          onDeleted={() => {
            setDeleting(undefined);
            list.reload();
          }}
          onCancel={() => setDeleting(undefined)}
        >
          Logins with it are refused from then on, its tokens stop working, and S3 keys made with it go with it.
        </ConfirmDeletion>
      ) : null}
    </Section>
  );
}
