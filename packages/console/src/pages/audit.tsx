import { query, type AuditEntry, type List } from '../api';
import { ErrorText, Loading, ScrollBox } from '../components';
import { useSession } from '../context';
import { navigate, useLoad } from '../hooks';
import { ACTIONS, COLLECTOR_ACTION } from '../lib/audit-actions';
import { formatSecond } from '../lib/format';

const PAGE = 50;
const FILTERS = ['operator', 'action', 'target_type', 'target_name', 'from', 'to', 'collector'] as const;
const TARGET_TYPES = [
  'users',
  'clusters',
  'operators',
  's3_credentials',
  'application_credentials',
  'sessions',
  'backup',
  'audit_log',
];

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
          // No action chosen: every action but the collectors' writes, unless those are asked for.
          action: f.action,
          action__in: f.action || f.collector ? undefined : ACTIONS.filter((a) => a !== COLLECTOR_ACTION).join(','),
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
        <label class="check">
          <input name="collector" type="checkbox" value="1" checked={!!f.collector} /> Include collector writes (
          {COLLECTOR_ACTION})
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
      {!f.action && !f.collector ? (
        <p class="hint">
          The utilization collectors' writes ({COLLECTOR_ACTION}, one per collection round) are left out; tick “Include
          collector writes” to see them.
        </p>
      ) : null}
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
                  <AuditTime iso={a.time} />
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

/** When: the reader's local time to the second on one line, its age on the next, the ISO time in the tooltip. */
function AuditTime({ iso }: { iso: string }) {
  const { when, age } = formatSecond(iso);
  return (
    <td class="time" title={iso}>
      <span class="when">{when}</span> <span class="age hint">{age}</span>
    </td>
  );
}
