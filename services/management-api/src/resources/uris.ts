/** The largest values of Postgres's integer and bigint columns: ids beyond them cannot exist. */
export const INT4_MAX = 2147483647n;
export const INT8_MAX = 9223372036854775807n;

export const API_ROOT = '/api/v1';
export const clusterUri = (id: number): string => `${API_ROOT}/clusters/${id}/`;
export const userUri = (id: string): string => `${API_ROOT}/users/${id}/`;
export const operatorUri = (id: number): string => `${API_ROOT}/operators/${id}/`;
export const apiKeyUri = (operatorId: number, id: string): string => `${API_ROOT}/operators/${operatorId}/keys/${id}/`;

/** A path id that fits the column, as a decimal string; anything else is simply not found. */
export function parseId(raw: string | undefined, max: bigint): string | null {
  if (!raw || !/^\d{1,19}$/.test(raw)) return null;
  const n = BigInt(raw);
  return n >= 1n && n <= max ? n.toString() : null;
}
export const parseIntId = (raw: string | undefined): number | null => {
  const id = parseId(raw, INT4_MAX);
  return id === null ? null : Number(id);
};
export const parseBigId = (raw: string | undefined): string | null => parseId(raw, INT8_MAX);

const RESOURCE_URI = (resource: string) => new RegExp(`^(?:https?://[^/]+)?${API_ROOT}/${resource}/(\\d{1,19})/?$`);
const CLUSTER_URI = RESOURCE_URI('clusters');

/** A related cluster given as a resource URI (`/api/v1/clusters/2/`) or a bare id. */
export function clusterIdFromRef(ref: unknown): number | null {
  if (typeof ref === 'number') return Number.isInteger(ref) && ref >= 1 && ref <= Number(INT4_MAX) ? ref : null;
  if (typeof ref !== 'string') return null;
  const m = CLUSTER_URI.exec(ref) ?? /^(\d{1,19})$/.exec(ref);
  return m ? parseIntId(m[1]) : null;
}

export const s3CredentialUri = (id: string): string => `${API_ROOT}/s3_credentials/${id}/`;
export const applicationCredentialUri = (id: string): string => `${API_ROOT}/application_credentials/${id}/`;
const USER_URI = RESOURCE_URI('users');

/** A related user given as a resource URI (`/api/v1/users/12/`) or a bare id, as a bigint string. */
export function userIdFromRef(ref: unknown): string | null {
  if (typeof ref === 'number') return Number.isSafeInteger(ref) && ref >= 1 ? String(ref) : null;
  if (typeof ref !== 'string') return null;
  const m = USER_URI.exec(ref) ?? /^(\d{1,19})$/.exec(ref);
  return m ? parseBigId(m[1]) : null;
}
