import { usageKey, type DeviceUsage, type PlanDevice } from './types';

/** What the wrapper reports per device, before usage is added. */
export interface MovedDevice extends Omit<
  PlanDevice,
  'used_bytes' | 'size_bytes' | 'projected_used_bytes' | 'projected_used_pct'
> {
  moved_out: number;
  moved_in: number;
}

/**
 * Adds used and projected bytes from recon's disk usage. A replica leaving a device takes that
 * device's bytes per replica with it; one arriving brings the average of the reporting devices
 * (Swift spreads objects over partitions evenly, so replicas weigh about the same everywhere).
 */
export function withUsage(
  devices: MovedDevice[],
  usage: Map<string, DeviceUsage> | undefined,
): { devices: PlanDevice[]; bytesToMove: number | null; notes: string[] } {
  const notes: string[] = [];
  if (!usage) {
    notes.push(
      'No device usage was given (pass --usage-from-recon): used_bytes, projected_used_bytes, projected_used_pct and bytes_to_move are null.',
    );
    return { devices: devices.map((d) => strip(d, null, null, null, null)), bytesToMove: null, notes };
  }
  let used = 0;
  let parts = 0;
  for (const d of devices) {
    const u = usage.get(usageKey(d));
    if (u && d.parts > 0) {
      used += u.used;
      parts += d.parts;
    }
  }
  const perReplica = parts > 0 ? used / parts : null;
  let bytesToMove: number | null = 0;
  const missing: string[] = [];
  const rows = devices.map((d) => {
    const u = usage.get(usageKey(d));
    if (!u) {
      if (d.moved_out > 0) missing.push(usageKey(d));
      return strip(d, null, null, null, null);
    }
    const out = d.parts > 0 ? (d.moved_out * u.used) / d.parts : 0;
    if (bytesToMove !== null) bytesToMove += out;
    const projected = perReplica === null ? null : Math.round(u.used - out + d.moved_in * perReplica);
    const pct = projected !== null && u.size > 0 ? Math.round((10000 * projected) / u.size) / 100 : null;
    return strip(d, u.used, u.size, projected, pct);
  });
  if (missing.length > 0) {
    notes.push(
      `No usage for ${missing.length} device(s) that give partitions away (${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}): bytes_to_move is null.`,
    );
    bytesToMove = null;
  }
  return { devices: rows, bytesToMove: bytesToMove === null ? null : Math.round(bytesToMove), notes };
}

function strip(
  d: MovedDevice,
  used: number | null,
  size: number | null,
  projected: number | null,
  pct: number | null,
): PlanDevice {
  return {
    id: d.id,
    region: d.region,
    zone: d.zone,
    ip: d.ip,
    port: d.port,
    device: d.device,
    weight: d.weight,
    weight_after: d.weight_after,
    parts: d.parts,
    parts_after: d.parts_after,
    used_bytes: used,
    size_bytes: size,
    projected_used_bytes: projected,
    projected_used_pct: pct,
  };
}
