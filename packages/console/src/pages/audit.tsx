import { query, type AuditEntry, type List } from '../api';
import { ErrorText, Loading, ScrollBox } from '../components';
import { useSession } from '../context';
import { navigate, useLoad } from '../hooks';
import { formatTime } from '../lib/format';

const PAGE = 50;
const FILTERS = ['operator', 'action', 'target_type', 'target_name', 'from', 'to'] as const;
/** Every action and target type the management API records (services/management-api, repositories/audit.ts). */
const ACTIONS = [
  'create',
  'update',
  'delete',
  'replace_devices',
  'add_key',
  'delete_key',
  'record_utilization',
  'sign_in',
  'sign_out',
  'step_up',
  'backup',
];
const TARGET_TYPES = ['users', 'clusters', 'operators', 's3_credentials', 'sessions', 'backup'];

/** The audit trail, newest first, with the API's own filters. */
export function AuditPage({ params }: { params: URLSearchParams }) {
  const { call } = useSession();
  const f = Object.fromEntries(FILTERS.map((k) => [k, params.get(k) ?? ''])) as Record<
    (typeof FILTERS)[number],
    string
  >;
  const offset = Math.max(0, Number(params.get('offset') ?? 0) || 0);
  const list = useLoad(
    () =>
      call<List<AuditEntry>>(
        'GET',
        `audit/${query({
          operator: f.operator,
          action: f.action,
          target_type: f.target_type,
          target_name__startswith: f.target_name,
          time__gte: f.from,
          time__lte: f.to ? `${f.to}T23:59:59.999Z` : undefined,
          limit: PAGE,
          offset,
        })}`,
      ),
    [...FILTERS.map((k) => f[k]), offset],
  );
  const total = list.data?.meta.total_count ?? 0;
  return (
    <>
      <h1 tabIndex={-1}>Audit trail</h1>
      <form
        class="row filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          const data = new FormData(e.currentTarget);
          navigate('/audit', Object.fromEntries(FILTERS.map((k) => [k, String(data.get(k) ?? '')])));
        }}
      >
        <label>
          Operator
          <input name="operator" value={f.operator} />
        </label>
        <label>
          Action
          <select name="action" value={f.action}>
            <option value="">any</option>
            {ACTIONS.map((a) => (
              <option value={a}>{a}</option>
            ))}
          </select>
        </label>
        <label>
          Target type
          <select name="target_type" value={f.target_type}>
            <option value="">any</option>
            {TARGET_TYPES.map((a) => (
              <option value={a}>{a}</option>
            ))}
          </select>
        </label>
        <label>
          Target name starts with
          <input name="target_name" value={f.target_name} />
        </label>
        <label>
          From (UTC)
          <input name="from" type="date" value={f.from} />
        </label>
        <label>
          To (UTC)
          <input name="to" type="date" value={f.to} />
        </label>
        <button type="submit">Apply</button>
      </form>
      <ErrorText error={list.error} />
      {list.loading && !list.data ? <Loading what="the audit trail" /> : null}
      {list.data ? (
        <ScrollBox label="Audit entries" busy={list.loading}>
          <table class="audit">
            <caption class="sr-only">Audit entries, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Operator</th>
                <th scope="col">Action</th>
                <th scope="col">Target</th>
                <th scope="col">Change</th>
              </tr>
            </thead>
            <tbody>
              {list.data.objects.map((a) => (
                <tr>
                  <td>{formatTime(a.time)}</td>
                  <td>{a.operator}</td>
                  <td>{a.action}</td>
                  <td>
                    {a.target_type} <strong>{a.target_name}</strong>
                  </td>
                  <td>
                    <details>
                      <summary>before / after</summary>
                      <pre tabIndex={0}>{JSON.stringify({ before: a.before, after: a.after }, null, 2)}</pre>
                      {a.request_id ? <p class="hint">request {a.request_id}</p> : null}
                    </details>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {list.data.objects.length === 0 ? <p>No entries match.</p> : null}
        </ScrollBox>
      ) : null}
      {list.data ? (
        <nav class="pager row" aria-label="Pages">
          <button
            type="button"
            class="secondary"
            disabled={offset === 0}
            onClick={() => navigate('/audit', { ...f, offset: Math.max(0, offset - PAGE) || undefined })}
          >
            Newer
          </button>
          <span role="status">
            {total === 0 ? 0 : offset + 1}–{Math.min(offset + PAGE, total)} of {total.toLocaleString()}
          </span>
          <button
            type="button"
            class="secondary"
            disabled={offset + PAGE >= total}
            onClick={() => navigate('/audit', { ...f, offset: offset + PAGE })}
          >
            Older
          </button>
        </nav>
      ) : null}
    </>
  );
}
