import { readFileSync } from 'node:fs';
import Joi from 'joi';
import { loadConfig, passwordHashConfig, type ConfigSpec, type Env, type PasswordHashSettings } from '@cairn/config';
import { parseNetworks } from './utilization/networks';

/**
 * The management API's address as `cairn` keeps it: the server's root, to which every call adds its
 * `/api/v1/…` path. The address the start banner prints (`…/api/v1/`) is taken as its root, so that
 * pasting it does not make every call ask for `/api/v1/api/v1/…` (a 404 that names no cause).
 */
export const apiUrlSchema = Joi.string()
  .uri({ scheme: ['http', 'https'] })
  .replace(/(\/api(\/v1)?)?\/*$/, '');

/** The only place the cairn CLI reads the environment (the services read their own config.ts). */
export const collectorConfigSpec = {
  apiUrl: {
    env: 'CAIRN_API_URL',
    doc: "Management API that cairn's commands and the collectors call, with or without its /api/v1 path. Default: the current context's, else http://127.0.0.1:8000.",
    schema: apiUrlSchema,
  },
  apiKey: {
    env: 'CAIRN_API_KEY',
    doc: 'The "<operator>:<key>" to call it with (for the collectors an admin, or an admin limited to the cluster). Default: the current context\'s key file.',
    schema: Joi.string()
      .pattern(/^[^:\s]+:\S+$/)
      .message('must be "<operator>:<key>"'),
    secret: true,
  },
  context: {
    env: 'CAIRN_CONTEXT',
    doc: "The context (in the config file) commands use when --context is not given. Default: the file's current context.",
    schema: Joi.string().max(128),
  },
  configHome: {
    env: 'XDG_CONFIG_HOME',
    doc: 'Directory of cairn/config.yaml, the contexts file. Default: ~/.config.',
    schema: Joi.string(),
  },
  reconTimeoutMs: {
    env: 'CAIRN_RECON_TIMEOUT_MS',
    doc: 'Timeout of one GET /recon/diskusage.',
    schema: Joi.number().integer().min(100).max(120000).default(5000),
  },
  reconConcurrency: {
    env: 'CAIRN_RECON_CONCURRENCY',
    doc: 'Storage nodes polled at once.',
    schema: Joi.number().integer().min(1).max(256).default(16),
  },
  healthConcurrency: {
    env: 'CAIRN_HEALTH_CONCURRENCY',
    doc: "Storage nodes the health collector reads at once (one request in flight per node: a node's 14 recon endpoints are read in turn over one connection).",
    schema: Joi.number().integer().min(1).max(256).default(32),
  },
  healthNodeTimeoutMs: {
    env: 'CAIRN_HEALTH_NODE_TIMEOUT_MS',
    doc: 'Time the health collector gives one storage node for all its 14 recon endpoints together; an endpoint not answered by then is an error of its own, and a node that answered none is silent.',
    schema: Joi.number().integer().min(100).max(120000).default(5000),
  },
  utilizationUser: {
    env: 'CAIRN_UTILIZATION_USER',
    doc: 'Superuser storage user whose token the utilization collector HEADs every account with.',
    schema: Joi.string().max(255),
  },
  utilizationPassword: {
    env: 'CAIRN_UTILIZATION_PASSWORD',
    doc: 'Password of CAIRN_UTILIZATION_USER.',
    schema: Joi.string().max(1024),
    secret: true,
  },
  utilizationAuthUrl: {
    env: 'CAIRN_UTILIZATION_AUTH_URL',
    doc: "Where the utilization collector logs in, when it reaches the cluster's auth gateway by another address than the cluster's auth_url (a private network, a container network). Default: the cluster's auth_url.",
    schema: Joi.string().uri({ scheme: ['http', 'https'] }),
  },
  utilizationStorageUrl: {
    env: 'CAIRN_UTILIZATION_STORAGE_URL',
    doc: "Where the utilization collector HEADs accounts, when it reaches the Swift proxy by another address than the cluster's storage_url. Default: the cluster's storage_url.",
    schema: Joi.string().uri({ scheme: ['http', 'https'] }),
  },
  utilizationConcurrency: {
    env: 'CAIRN_UTILIZATION_CONCURRENCY',
    doc: 'Account HEADs in flight at once.',
    schema: Joi.number().integer().min(1).max(512).default(16),
  },
  utilizationTimeoutMs: {
    env: 'CAIRN_UTILIZATION_TIMEOUT_MS',
    doc: 'Timeout of one account HEAD (and of the login).',
    schema: Joi.number().integer().min(100).max(120000).default(10000),
  },
  utilizationRetries: {
    env: 'CAIRN_UTILIZATION_RETRIES',
    doc: 'Retries of a failed account HEAD (with backoff) before the account counts as failed for the round.',
    schema: Joi.number().integer().min(0).max(10).default(3),
  },
  utilizationInternalNetworks: {
    env: 'CAIRN_UTILIZATION_INTERNAL_NETWORKS',
    doc: "The provider's own networks, as comma-separated CIDRs (10.0.0.0/8,fd00::/8): `cairn utilization ingest-logs` records their requests as internal traffic, apart from the rest, so that egress can be billed on external traffic only. Default: none (all traffic is external).",
    schema: Joi.string()
      .max(10000)
      .custom((value: string) => parseNetworks(value).source, 'CIDR list')
      .messages({ 'any.custom': 'must be comma-separated CIDRs such as 10.0.0.0/8,fd00::/8: {{#error.message}}' }),
  },
  utilizationInternalAddress: {
    env: 'CAIRN_UTILIZATION_INTERNAL_ADDRESS',
    doc: "Which address of an access log line is matched against CAIRN_UTILIZATION_INTERNAL_NETWORKS: remote_addr (the TCP peer, which a client cannot choose) or client_ip (X-Forwarded-For's first address, which a client can forge: only behind a load balancer that replaces it). Default: remote_addr.",
    schema: Joi.string().valid('remote_addr', 'client_ip').default('remote_addr'),
  },
  ...passwordHashConfig,
} satisfies ConfigSpec;

export interface CollectorConfig extends PasswordHashSettings {
  apiUrl: string;
  apiKey?: string;
  context?: string;
  configHome?: string;
  reconTimeoutMs: number;
  reconConcurrency: number;
  healthConcurrency: number;
  healthNodeTimeoutMs: number;
  utilizationUser?: string;
  utilizationPassword?: string;
  utilizationAuthUrl?: string;
  utilizationStorageUrl?: string;
  utilizationConcurrency: number;
  utilizationTimeoutMs: number;
  utilizationRetries: number;
  utilizationInternalNetworks?: string;
  utilizationInternalAddress: 'remote_addr' | 'client_ip';
}

/**
 * The settings as the environment gives them; `apiUrl`/`apiKey` may still come from a context (see remote/target.ts).
 */
export type CliSettings = Omit<CollectorConfig, 'apiUrl'> & { apiUrl?: string };

export function readCliSettings(env: Env = process.env): CliSettings {
  return loadConfig<CliSettings>(collectorConfigSpec, env, (p) => readFileSync(p, 'utf8'));
}
