import type { Command } from 'commander';
import { addList, type ResourceView } from '../remote/resource';

const VIEW: ResourceView = {
  path: '/api/v1/audit/',
  noun: 'audit entrie',
  columns: ['id', 'time', 'operator', 'action', 'target_type', 'target_id', 'target_name'],
};

export function registerAudit(program: Command): void {
  const audit = program.command('audit').description('who changed what, when (management API)');
  addList(
    audit,
    { ...VIEW, noun: 'audit entrie' },
    (c) => c.option('--since <time>', 'ISO 8601 date or date-time: only changes from then on'),
    (f) => (f.since ? [['time__gte', String(f.since)]] : []),
  );
}
