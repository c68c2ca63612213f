import { readFileSync } from 'node:fs';
import Joi from 'joi';
import { loadConfig, type ConfigSpec, type Env } from '@cairn/config';

/** The only place auth-gateway reads the environment. Every key: env name, doc, default. */
export const configSpec = {
  host: {
    env: 'CAIRN_GATEWAY_HOST',
    doc: 'Address auth-gateway listens on.',
    schema: Joi.string().hostname().default('0.0.0.0'),
  },
  port: {
    env: 'CAIRN_GATEWAY_PORT',
    doc: 'Port auth-gateway listens on (0 picks a free one).',
    schema: Joi.number().integer().min(0).max(65535).default(5000),
  },
  cluster: {
    env: 'CAIRN_GATEWAY_CLUSTER',
    doc: 'The cluster this gateway authenticates for: its id, name or uuid.',
    schema: Joi.string()
      .max(255)
      .pattern(/^[^/\u0000-\u001f\u007f-\u009f]+$/u) // eslint-disable-line no-control-regex
      .message("must be a cluster id, name or uuid: 1 to 255 characters with no '/' and no control characters")
      .default('default'),
  },
  publicUrl: {
    env: 'CAIRN_GATEWAY_PUBLIC_URL',
    doc: 'Public URL of the gateway\'s /auth root as clients reach it (e.g. https://auth.example.com/auth). Unset: derived from each request\'s Host and X-Forwarded-Proto.',
    schema: Joi.string()
      .uri({ scheme: ['http', 'https'] })
      .max(2048)
      .replace(/\/+$/, ''),
  },
  databaseUrl: {
    env: 'DATABASE_URL',
    doc: 'Postgres connection URL the gateway reads storage users from (read-only).',
    schema: Joi.string().uri({ scheme: ['postgres', 'postgresql'] }),
    secret: true,
  },
  redisUrl: {
    env: 'REDIS_URL',
    doc: 'Redis connection URL (redis:// or rediss://) for the token store.',
    schema: Joi.string().uri({ scheme: ['redis', 'rediss'] }),
    secret: true,
  },
  logLevel: {
    env: 'LOG_LEVEL',
    doc: 'pino log level.',
    schema: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info'),
  },
} satisfies ConfigSpec;

export interface GatewayConfig {
  host: string;
  port: number;
  cluster: string;
  /** Without a trailing slash. */
  publicUrl?: string;
  databaseUrl?: string;
  redisUrl?: string;
  logLevel: string;
}

/** Reads and validates the whole configuration at once; throws a ConfigError listing every problem. */
export function readConfig(env: Env = process.env): GatewayConfig {
  return loadConfig<GatewayConfig>(configSpec, env, (p) => readFileSync(p, 'utf8'));
}
