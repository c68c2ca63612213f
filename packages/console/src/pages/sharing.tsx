import { useEffect, useState } from 'preact/hooks';
import { errorText, type Call } from '../api';
import { Copyable, ErrorText, Loading, ScrollBox, Section } from '../components';
import { useLoad } from '../hooks';
import { usersOf } from '../lib/acl-users';
import type { MyContainer, MyTempUrl, MyTempUrlKeys, StorageSession } from '../self-session';

/**
 * "Sharing": the signed-in storage user's containers with who may read and write them, its
 * temporary URL keys and a temporary URL generator. Every call goes to the management API, which
 * asks the cluster's Swift with the user's sign-in; the temp-URL key never reaches this page.
 */
export function SharingPage({ call, session }: { call: Call; session: StorageSession }) {
  useEffect(() => {
    document.querySelector<HTMLElement>('main h1')?.focus();
  }, []);
  const keys = useLoad(() => call<MyTempUrlKeys>('GET', 'self/temp_url_keys/'), []);
  return (
    <>
      <h1 tabIndex={-1}>Sharing</h1>
      <Containers call={call} session={session} />
      {keys.loading && !keys.data ? <Loading what="your temporary URL settings" /> : null}
      <ErrorText error={keys.error} />
      {keys.data && !keys.data.tempurl ? (
        <Section title="Temporary URLs">
          <p>This cluster's Swift makes no temporary URLs (its proxy has no tempurl middleware).</p>
        </Section>
      ) : null}
      {keys.data?.tempurl ? (
        <>
          <TempUrlKeys call={call} keys={keys.data} onChange={keys.reload} />
          {keys.data.key_set ? <TempUrlGenerator call={call} keys={keys.data} /> : null}
        </>
      ) : null}
    </>
  );
}

/** Containers per page: the API's page (CONTAINERS_LISTED in services/self-sharing.ts). */
const PAGE = 200;

function Containers({ call, session }: { call: Call; session: StorageSession }) {
  // The markers of the pages before this one (Swift's paging): empty on the first page.
  const [markers, setMarkers] = useState<string[]>([]);
  const marker = markers[markers.length - 1];
  const list = useLoad(
    () =>
      call<{ objects: MyContainer[]; truncated: boolean; next_marker: string | null }>(
        'GET',
        `self/containers/${marker === undefined ? '' : `?marker=${encodeURIComponent(marker)}`}`,
      ),
    [marker],
  );
  const [editing, setEditing] = useState<MyContainer>();
  const rows = list.data?.objects ?? [];
  const next = list.data?.next_marker;
  const first = markers.length * PAGE + 1;
  const who = (users: string[], extra: string[]) => [...extra, ...users].join(', ') || 'only you';
  return (
    <Section title="Containers">
      <p class="hint">
        Who besides you may read or write each container of your account <code>{session.account}</code>. Other users
        reach it with your account in their storage URL (<code>swift --os-storage-url …/{session.account}</code>).
      </p>
      {list.loading && !list.data ? <Loading what="your containers" /> : null}
      <ErrorText error={list.error} />
      {list.data && rows.length === 0 ? <p>You have no containers.</p> : null}
      {markers.length || next ? (
        <p class="row">
          <span>
            Containers {first} to {first + rows.length - 1}
            {next ? ' (there are more)' : ''}
          </span>
          {markers.length ? (
            <button type="button" disabled={list.loading} onClick={() => setMarkers(markers.slice(0, -1))}>
              Previous {PAGE}
            </button>
          ) : null}
          {next ? (
            <button type="button" disabled={list.loading} onClick={() => setMarkers([...markers, next])}>
              Next {PAGE}
            </button>
          ) : null}
        </p>
      ) : null}
      {rows.length > 0 ? (
        <ScrollBox label="Your containers" busy={list.loading}>
          <table class="containers">
            <thead>
              <tr>
                <th scope="col">Container</th>
                <th scope="col">May read</th>
                <th scope="col">May write</th>
                <th scope="col" class="pin-end">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((c) => (
                <tr key={c.name}>
                  <td>
                    <code>{c.name}</code>
                  </td>
                  <td>
                    {who(c.read.users, [
                      ...(c.public_read ? [c.public_listings ? 'everyone (and may list)' : 'everyone'] : []),
                      ...c.read.other,
                    ])}
                  </td>
                  <td>{who(c.write.users, c.write.other)}</td>
                  <td class="pin-end">
                    <button type="button" aria-label={`Edit who may use ${c.name}`} onClick={() => setEditing(c)}>
                      Edit
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      ) : null}
      {editing ? (
        <AclEditor
          key={editing.name}
          call={call}
          container={editing}
          onDone={() => {
            setEditing(undefined);
            list.reload();
          }}
        />
      ) : null}
    </Section>
  );
}

function AclEditor({ call, container, onDone }: { call: Call; container: MyContainer; onDone: () => void }) {
  const [readUsers, setReadUsers] = useState(container.read.users.join(', '));
  const [writeUsers, setWriteUsers] = useState(container.write.users.join(', '));
  const [publicRead, setPublicRead] = useState(container.public_read);
  const [listings, setListings] = useState(container.public_listings);
  const [error, setError] = useState<string>();
  const save = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    try {
      await call('PUT', `self/containers/${encodeURIComponent(container.name)}/`, {
        read_users: usersOf(readUsers),
        write_users: usersOf(writeUsers),
        public_read: publicRead,
        public_listings: publicRead && listings,
      });
      onDone();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <form class="stack" onSubmit={save} aria-label={`Who may use ${container.name}`}>
      <h3>
        Who may use <code>{container.name}</code>
      </h3>
      <label>
        Users who may read (user names of your cluster, separated by commas)
        <input name="read_users" value={readUsers} onInput={(e) => setReadUsers(e.currentTarget.value)} />
      </label>
      <p class="hint">They may list the container and download its objects, signed in as themselves.</p>
      <label class="check">
        <input type="checkbox" checked={publicRead} onChange={(e) => setPublicRead(e.currentTarget.checked)} /> Anyone
        may read (public)
      </label>
      <p class="hint">
        Anyone who has an object's URL may download it, with no password at all. Do not choose this for anything
        private.
      </p>
      <label class="check">
        <input
          type="checkbox"
          checked={publicRead && listings}
          disabled={!publicRead}
          onChange={(e) => setListings(e.currentTarget.checked)}
        />{' '}
        Anyone may also list the objects
      </label>
      <p class="hint">With public read: anyone may see every object's name, not only download the ones they know.</p>
      <label>
        Users who may write (user names of your cluster, separated by commas)
        <input name="write_users" value={writeUsers} onInput={(e) => setWriteUsers(e.currentTarget.value)} />
      </label>
      <p class="hint">They may upload, overwrite and delete objects in this container (not change who may use it).</p>
      {container.read.other.length || container.write.other.length ? (
        <p class="hint">
          Kept as set by other tools: <code>{[...container.read.other, ...container.write.other].join(', ')}</code>
        </p>
      ) : null}
      <ErrorText error={error} />
      <p class="row">
        <button type="submit">Save</button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </p>
    </form>
  );
}

function TempUrlKeys({ call, keys, onChange }: { call: Call; keys: MyTempUrlKeys; onChange: () => void }) {
  const [error, setError] = useState<string>();
  const act = async (action: 'set' | 'rotate' | 'drop_previous') => {
    setError(undefined);
    try {
      await call('POST', 'self/temp_url_keys/', { action });
      onChange();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <Section title="Temporary URL key">
      <p class="hint">
        Temporary URLs are signed with your account's key, which stays on the server. Rotating makes a new key and keeps
        the current one as the previous key, so links made with it keep working; drop the previous key once they no
        longer matter (a second rotation drops it too).
      </p>
      <p>
        {keys.key_set ? 'A key is set.' : 'No key is set yet.'}{' '}
        {keys.previous_key_set ? 'A previous key still signs older links.' : ''}
      </p>
      <p class="row">
        {keys.key_set ? (
          <button type="button" onClick={() => act('rotate')}>
            Rotate the key
          </button>
        ) : (
          <button type="button" onClick={() => act('set')}>
            Set a key
          </button>
        )}
        {keys.previous_key_set ? (
          <button type="button" class="danger" onClick={() => act('drop_previous')}>
            Drop the previous key
          </button>
        ) : null}
      </p>
      <ErrorText error={error} />
    </Section>
  );
}

function TempUrlGenerator({ call, keys }: { call: Call; keys: MyTempUrlKeys }) {
  const [container, setContainer] = useState('');
  const [object, setObject] = useState('');
  const [method, setMethod] = useState(keys.tempurl_methods[0] ?? 'GET');
  const [minutes, setMinutes] = useState('60');
  const [made, setMade] = useState<MyTempUrl>();
  const [error, setError] = useState<string>();
  const maxMinutes = Math.floor(keys.max_lifetime_seconds / 60);
  const make = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setMade(undefined);
    const lifetime = Math.round(Number(minutes) * 60);
    if (!Number.isFinite(lifetime) || lifetime < 1) return setError('The lifetime is a number of minutes.');
    try {
      setMade(
        await call<MyTempUrl>('POST', 'self/temp_urls/', { container, object, method, lifetime_seconds: lifetime }),
      );
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <Section title="Make a temporary URL">
      <p class="hint">
        Anyone who has the link may use it, with no password, until it ends (at most {maxMinutes} minutes). GET
        downloads the object, HEAD looks at it, PUT uploads it.
      </p>
      <form class="row filters" onSubmit={make}>
        <label>
          Container
          <input name="container" required value={container} onInput={(e) => setContainer(e.currentTarget.value)} />
        </label>
        <label>
          Object
          <input name="object" required value={object} onInput={(e) => setObject(e.currentTarget.value)} />
        </label>
        <label>
          Method
          <select name="method" value={method} onChange={(e) => setMethod(e.currentTarget.value)}>
            {keys.tempurl_methods.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </label>
        <label>
          Lifetime (minutes)
          <input
            name="lifetime_minutes"
            type="number"
            min="1"
            max={maxMinutes}
            value={minutes}
            onInput={(e) => setMinutes(e.currentTarget.value)}
          />
        </label>
        <button type="submit">Make URL</button>
      </form>
      <ErrorText error={error} />
      {made ? (
        <p role="status">
          {made.method} until {new Date(made.expires_at).toLocaleString()}:{' '}
          <Copyable value={made.url} label="temporary URL" />
        </p>
      ) : null}
    </Section>
  );
}
