import { useMemo, useState } from 'preact/hooks';
import { ScrollBox } from '../components';
import {
  compareDevices,
  nextSort,
  rawBytes as raw,
  type DeviceRow,
  type DeviceSortKey as Key,
} from '../lib/device-sort';
import { formatBytes, formatPct } from '../lib/format';
import { WARN_PCT } from './charts';

const PAGE = 200;
/** Used % right after the device's name: what the page is read for, in view on a phone too. */
const HEADERS: Array<{ key: Key; label: string; num?: boolean }> = [
  { key: 'node', label: 'Node' },
  { key: 'device', label: 'Device' },
  { key: 'pct', label: 'Used %', num: true },
  { key: 'ringSet', label: 'Policies' },
  { key: 'size', label: 'Size', num: true },
  { key: 'used_bytes', label: 'Used', num: true },
  { key: 'avail_bytes', label: 'Free', num: true },
];

/** Sortable by any column (a header button), filtered by text over node, device and policies. */
export function DeviceTable({ rows }: { rows: DeviceRow[] }) {
  const [filter, setFilter] = useState('');
  const [sort, setSort] = useState<{ key: Key; desc: boolean }>({ key: 'pct', desc: true });
  const [shown, setShown] = useState(PAGE);
  const [onlyOver, setOnlyOver] = useState(false);
  const visible = useMemo(() => {
    const f = filter.trim().toLowerCase();
    return rows
      .filter((d) => !f || `${d.node} ${d.device} ${d.ringSet}`.toLowerCase().includes(f))
      .filter((d) => !onlyOver || (d.pct !== null && d.pct >= WARN_PCT))
      .sort((a, b) => compareDevices(a, b, sort.key, sort.desc));
  }, [rows, filter, sort, onlyOver]);
  return (
    <>
      <div class="row filters">
        <label>
          Filter devices
          <input
            type="search"
            value={filter}
            placeholder="node, device or policy"
            onInput={(e) => (setFilter(e.currentTarget.value), setShown(PAGE))}
          />
        </label>
        <label class="check">
          <input type="checkbox" checked={onlyOver} onChange={(e) => setOnlyOver(e.currentTarget.checked)} /> only past{' '}
          {WARN_PCT} %
        </label>
        <span role="status">
          {visible.length.toLocaleString()} of {rows.length.toLocaleString()} devices
        </span>
      </div>
      <ScrollBox label="Devices">
        <table class="devices">
          <caption class="sr-only">Devices; column headers sort</caption>
          <thead>
            <tr>
              {HEADERS.map((h) => (
                <th
                  scope="col"
                  class={h.num ? 'num' : undefined}
                  aria-sort={sort.key === h.key ? (sort.desc ? 'descending' : 'ascending') : undefined}
                >
                  <button type="button" class="sort" onClick={() => setSort(nextSort(sort, h.key, !!h.num))}>
                    {h.label}
                    <span aria-hidden="true">{sort.key === h.key ? (sort.desc ? ' ▼' : ' ▲') : ''}</span>
                  </button>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {visible.slice(0, shown).map((d) => (
              <tr class={d.pct !== null && d.pct >= WARN_PCT ? 'warn' : undefined}>
                <td>{d.node}</td>
                <td>{d.device}</td>
                <td class="num" data-field="pct">
                  {d.pct === null ? (d.mounted ? 'no usage' : 'unmounted') : formatPct(d.pct)}
                </td>
                <td>{d.policies.join(', ')}</td>
                <td class="num">{formatBytes(d.size_bytes ?? raw(d))}</td>
                <td class="num">{formatBytes(d.used_bytes)}</td>
                <td class="num">{formatBytes(d.avail_bytes)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollBox>
      {visible.length > shown ? (
        <button type="button" class="secondary" onClick={() => setShown(shown + PAGE)}>
          Show {Math.min(PAGE, visible.length - shown)} more
        </button>
      ) : null}
    </>
  );
}
