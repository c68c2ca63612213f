import Joi from 'joi';
import { errors } from '../errors';
import { echoName } from '../escape';
import { validate } from '../validation';

/**
 * One health round of a cluster (POST /api/v1/clusters/<id>/health/rounds/, sent by `cairn health
 * collect`): every storage node's recon documents as Swift returned them. Validated as a whole;
 * nothing is stored unless all of it is good.
 */
export const SERVER_TYPES = ['account', 'container', 'object'] as const;
export type ServerType = (typeof SERVER_TYPES)[number];

/** The recon endpoints a round carries, each keyed as its path after /recon/. */
export const RECON_KEYS = [
  'diskusage',
  'unmounted',
  'driveaudit',
  'async',
  'quarantined',
  'replication/account',
  'replication/container',
  'replication/object',
  'updater/container',
  'updater/object',
  'expirer/object',
  'ringmd5',
  'time',
  'load',
] as const;
export type ReconKey = (typeof RECON_KEYS)[number];

export const MAX_ROUND_NODES = 10_000;
/** One recon document, as JSON text; Swift's largest (diskusage of a 100-drive node) is a few KB. */
export const MAX_RECON_VALUE_BYTES = 64 * 1024;

export interface RoundNode {
  /** ip:port of the storage server, as in the ring. */
  node: string;
  serverTypes: ServerType[];
  /** False: every endpoint failed; `error` says why. */
  answered: boolean;
  error: string | null;
  elapsedMs: number;
  /** Each endpoint's JSON as Swift returned it, or {"error": "…"}; absent when not read. */
  recon: Partial<Record<ReconKey, unknown>>;
}

export interface HealthRound {
  collectedAt: Date;
  /** The cluster's current rings' md5 by file name (object.ring.gz, object-1.ring.gz, …). */
  ringMd5: Record<string, string>;
  nodes: RoundNode[];
}

// eslint-disable-next-line no-control-regex
const NO_CONTROL = /^[^\u0000-\u001f\u007f]{1,255}$/;

const reconValue = Joi.any().custom((value: unknown, helpers) => {
  const text = JSON.stringify(value);
  if (text !== undefined && new TextEncoder().encode(text).length > MAX_RECON_VALUE_BYTES)
    return helpers.error('recon.size');
  return value;
});

const nodeSchema = Joi.object({
  node: Joi.string().pattern(NO_CONTROL).required().messages({
    'string.pattern.base': 'The {{#label}} field must be the ip:port of a storage server, as the ring lists it.',
  }),
  server_types: Joi.array()
    .items(Joi.string().valid(...SERVER_TYPES))
    .unique()
    .max(SERVER_TYPES.length)
    .required()
    .messages({ 'array.unique': 'The {{#label}} field names a server type twice.' }),
  answered: Joi.boolean().required(),
  error: Joi.string().max(1000).allow(null).default(null),
  elapsed_ms: Joi.number().integer().min(0).max(3_600_000).required(),
  recon: Joi.object(Object.fromEntries(RECON_KEYS.map((k) => [k, reconValue])))
    .default({})
    .messages({
      'recon.size': `The {{#label}} field is larger than ${MAX_RECON_VALUE_BYTES / 1024} KiB of JSON; no recon document is that large.`,
    }),
});

const roundSchema = Joi.object({
  collected_at: Joi.string().isoDate().required().messages({
    'string.isoDate': 'The {{#label}} field must be an ISO 8601 date-time such as 2026-11-28T21:00:00.000Z.',
  }),
  ring_md5: Joi.object()
    .pattern(
      Joi.string().pattern(/^[A-Za-z0-9._-]{1,255}$/),
      Joi.string()
        .pattern(/^[0-9a-f]{32}$/)
        .messages({ 'string.pattern.base': 'The {{#label}} field must be an md5 sum: 32 lowercase hex digits.' }),
    )
    .max(1000)
    .required(),
  nodes: Joi.array().items(nodeSchema).max(MAX_ROUND_NODES).required(),
}).messages({ 'object.max': 'The {{#label}} field has too many rings.' });

interface RawRound {
  collected_at: string;
  ring_md5: Record<string, string>;
  nodes: Array<{
    node: string;
    server_types: ServerType[];
    answered: boolean;
    error: string | null;
    elapsed_ms: number;
    recon: Partial<Record<ReconKey, unknown>>;
  }>;
}

/** A round as posted, checked whole; every problem in one sentence (INVALID_INPUT). */
export function validateHealthRound(body: unknown, now: Date): HealthRound {
  const raw = validate<RawRound>(roundSchema, body);
  const collectedAt = new Date(raw.collected_at);
  // A clock far ahead would make every later round look old; a little is the collector's skew.
  if (collectedAt.getTime() > now.getTime() + 5 * 60_000)
    throw errors.invalidInput(
      `The collected_at field (${raw.collected_at}) is more than 5 minutes ahead of the API's clock (${now.toISOString()}); check the collector's clock.`,
    );
  const seen = new Set<string>();
  for (const n of raw.nodes) {
    if (seen.has(n.node))
      throw errors.invalidInput(
        `The node '${echoName(n.node)}' appears twice in the round; list each storage server once.`,
      );
    seen.add(n.node);
  }
  return {
    collectedAt,
    ringMd5: raw.ring_md5,
    nodes: raw.nodes.map((n) => ({
      node: n.node,
      serverTypes: n.server_types,
      answered: n.answered,
      error: n.error ?? null,
      elapsedMs: n.elapsed_ms,
      recon: n.recon ?? {},
    })),
  };
}
