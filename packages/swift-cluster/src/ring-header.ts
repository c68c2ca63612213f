import type { ByteOrder, Ring, RingDevice } from './ring-types';

/**
 * Turns a ring's decoded JSON header into a `Ring`, checking every field it uses. Problems come back
 * as a reason string (thrown as `RingProblem`) for the caller to attach to the file name.
 * Unknown keys are ignored, as Swift ignores them.
 */
export class RingProblem extends Error {}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isInt = (v: unknown, min: number, max: number): v is number =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
const show = (v: unknown): string => (v === undefined ? 'nothing' : JSON.stringify(v));

function fail(reason: string): never {
  throw new RingProblem(`invalid header: ${reason}`);
}

function int(obj: Json, key: string, where: string, min: number, max: number): number {
  const v = obj[key];
  if (!isInt(v, min, max)) fail(`${where}'${key}' must be an integer ${min}..${max} (got ${show(v)})`);
  return v;
}

function str(obj: Json, key: string, where: string): string {
  const v = obj[key];
  if (typeof v !== 'string' || v === '') fail(`${where}'${key}' must be a non-empty string (got ${show(v)})`);
  return v;
}

/** null and absent mean the same to Swift (`dict.get`). */
function optionalInt(obj: Json, key: string, min: number, max: number): number | undefined {
  return obj[key] === undefined || obj[key] === null ? undefined : int(obj, key, '', min, max);
}

function parseDevice(dev: Json, index: number): RingDevice {
  const where = `devs[${index}]: `;
  const id = int(dev, 'id', where, 0, 0xffff);
  if (id !== index) fail(`devs[${index}] has id ${id}; a device's id must be its index in devs`);
  const ip = str(dev, 'ip', where);
  const port = int(dev, 'port', where, 0, 65535);
  const weight = dev['weight'];
  if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0) {
    fail(`${where}'weight' must be a non-negative number (got ${show(weight)})`);
  }
  const meta = dev['meta'] ?? '';
  if (typeof meta !== 'string') fail(`${where}'meta' must be a string (got ${show(meta)})`);
  return {
    id,
    region: dev['region'] === undefined ? 1 : int(dev, 'region', where, 0, Number.MAX_SAFE_INTEGER),
    zone: int(dev, 'zone', where, 0, Number.MAX_SAFE_INTEGER),
    ip,
    port,
    replicationIp: dev['replication_ip'] === undefined ? ip : str(dev, 'replication_ip', where),
    replicationPort: dev['replication_port'] === undefined ? port : int(dev, 'replication_port', where, 0, 65535),
    device: str(dev, 'device', where),
    weight,
    meta,
  };
}

export interface ParsedHeader {
  ring: Ring;
  /** Length of the header's `devs` list, holes included: device ids are below this. */
  slots: number;
}

export function parseHeader(header: unknown): ParsedHeader {
  if (!isObject(header)) fail(`expected a JSON object, got ${Array.isArray(header) ? 'a list' : show(header)}`);
  const byteorder = header['byteorder'];
  if (byteorder !== 'little' && byteorder !== 'big')
    fail(`'byteorder' must be "little" or "big" (got ${show(byteorder)})`);
  const partShift = int(header, 'part_shift', '', 0, 32);
  const replicaCount = int(header, 'replica_count', '', 0, 0xffff);
  const devs = header['devs'];
  if (!Array.isArray(devs)) fail(`'devs' must be a list (got ${show(devs)})`);
  if (devs.length > 0x10000) fail(`'devs' has ${devs.length} entries; device ids are 16-bit`);
  const devices: RingDevice[] = [];
  devs.forEach((dev: unknown, index) => {
    if (dev === null) return; // a removed device's hole
    if (!isObject(dev)) fail(`devs[${index}] must be an object or null (got ${show(dev)})`);
    devices.push(parseDevice(dev, index));
  });
  const ring: Ring = { devices, partPower: 32 - partShift, replicaCount, byteorder: byteorder as ByteOrder };
  const version = optionalInt(header, 'version', 0, Number.MAX_SAFE_INTEGER);
  if (version !== undefined) ring.version = version;
  const nextPartPower = optionalInt(header, 'next_part_power', 0, 32);
  if (nextPartPower !== undefined) ring.nextPartPower = nextPartPower;
  return { ring, slots: devs.length };
}
