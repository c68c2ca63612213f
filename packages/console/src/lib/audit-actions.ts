import type { AUDIT_ACTIONS } from '@cairn/contract';

/** Every action the management API records (@cairn/contract's AUDIT_ACTIONS; a unit test keeps them equal). */
export const ACTIONS = [
  'create',
  'update',
  'delete',
  'replace_devices',
  'add_key',
  'delete_key',
  'record_utilization',
  'sign_in',
  'sign_in_failed',
  'sign_out',
  'step_up',
  'backup',
  'repair_quota_drift',
  'push_ring',
  'rollback_ring',
] as const satisfies ReadonlyArray<(typeof AUDIT_ACTIONS)[number]>;
/** The utilization collectors' writes: one per collector round, so hidden unless asked for. */
export const COLLECTOR_ACTION = 'record_utilization';
