import type { Quotas } from './quotas';

/** Shapes of Cairn's records as the domain sees them (no persistence details). */

export interface Cluster {
  id: number;
  name: string;
  uuid: string;
  authUrl: string;
  storageUrl: string;
  region: string;
  /** Quotas a user created without its own gets. */
  defaultQuotas: Quotas;
  createdAt: Date;
  updatedAt: Date;
}

export interface StorageUser {
  /** bigint in the database; carried as a decimal string so no precision is ever lost. */
  id: string;
  clusterId: number;
  username: string;
  passwordHash: string;
  /** Whose hash it is: Cairn's `scrypt`, or an imported one until the user's first login. */
  passwordScheme: string;
  isSuperuser: boolean;
  enabled: boolean;
  /** Bumped whenever the password, `enabled` or `isSuperuser` changes; lets gateways drop stale tokens. */
  generation: string;
  /** Desired account quotas, which the quota reconciler applies to Swift. */
  quotas: Quotas;
  createdAt: Date;
  updatedAt: Date;
}

export type OperatorRole = 'admin' | 'reader';
export const OPERATOR_ROLES: readonly OperatorRole[] = ['admin', 'reader'];

export interface Operator {
  id: number;
  name: string;
  role: OperatorRole;
  /** Empty: the operator may act on every cluster. */
  clusterIds: number[];
  createdAt: Date;
  updatedAt: Date;
}

export interface ApiKeyRecord {
  id: string;
  operatorId: number;
  createdAt: Date;
}

/** The Swift account a storage user owns. */
export const swiftAccountOf = (username: string): string => `AUTH_${username}`;
