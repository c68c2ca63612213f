import { useMemo, useState } from 'preact/hooks';
import type { Device } from '../api';
import { ScrollBox } from '../components';
import { formatBytes, formatPct } from '../lib/format';
import { WARN_PCT } from './charts';

export interface DeviceRow extends Device {
  ringSet: string;
  pct: number | null;
}

type Key = 'node' | 'device' | 'ringSet' | 'size' | 'used_bytes' | 'avail_bytes' | 'pct';

const raw = (d: DeviceRow) => (d.used_bytes === null || d.avail_bytes === null ? null : d.used_bytes + d.avail_bytes);
const value = (d: DeviceRow, k: Key): string | number | null => (k === 'size' ? (d.size_bytes ?? raw(d)) : d[k]);

/** Compares for a sort; devices that report nothing always sort last. */
export function compareDevices(a: DeviceRow, b: DeviceRow, key: Key, desc: boolean): number {
  const x = value(a, key);
  const y = value(b, key);
  if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
  const c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y), undefined, { numeric: true });
  return desc ? -c : c;
}

const PAGE = 200;
const HEADERS: Array<{ key: Key; label: string; num?: boolean }> = [
  { key: 'node', label: 'Node' },
  { key: 'device', label: 'Device' },
  { key: 'ringSet', label: 'Policies' },
  { key: 'size', label: 'Size', num: true },
  { key: 'used_bytes', label: 'Used', num: true },
  { key: 'avail_bytes', label: 'Free', num: true },
  { key: 'pct', label: 'Used %', num: true },
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
          <input type="search" value={filter} placeholder="node, device or policy" onInput={(e) => (setFilter(e.currentTarget.value), setShown(PAGE))} />
        </label>
        <label class="check">
          <input type="checkbox" checked={onlyOver} onChange={(e) => setOnlyOver(e.currentTarget.checked)} /> only past {WARN_PCT} %
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
                <th scope="col" class={h.num ? 'num' : undefined} aria-sort={sort.key === h.key ? (sort.desc ? 'descending' : 'ascending') : undefined}>
                  <button type="button" class="sort" onClick={() => setSort({ key: h.key, desc: sort.key === h.key ? !sort.desc : !!h.num })}>
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
                <td>{d.policies.join(', ')}</td>
                <td class="num">{formatBytes(d.size_bytes ?? raw(d))}</td>
                <td class="num">{formatBytes(d.used_bytes)}</td>
                <td class="num">{formatBytes(d.avail_bytes)}</td>
                <td class="num">{d.pct === null ? (d.mounted ? 'no usage' : 'unmounted') : formatPct(d.pct)}</td>
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
