import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import Joi from 'joi';

/**
 * Keystone V3 application credentials: a named secret a storage user makes for itself. The
 * generated secret is 64 random bytes (as Keystone makes them), so a fast hash is enough to store
 * it (SECURITY.md): nothing guesses 512 bits from a list. A secret the user chooses must be at
 * least MIN_APPLICATION_CREDENTIAL_SECRET characters for the same reason.
 */
export const MIN_APPLICATION_CREDENTIAL_SECRET = 32;

export function generateApplicationCredentialSecret(): string {
  return randomBytes(64).toString('base64url');
}

export function hashApplicationCredentialSecret(secret: string): string {
  return `sha256:${createHash('sha256').update(secret, 'utf8').digest('hex')}`;
}

/** A hash no secret has: compared against when no credential was found, so both take as long. */
const NO_HASH = `sha256:${'0'.repeat(64)}`;

/** Compares a presented secret with a stored hash in time independent of where they differ. */
export function applicationCredentialSecretMatches(presented: string, storedHash: string | null): boolean {
  const candidate = Buffer.from(hashApplicationCredentialSecret(presented));
  const stored = Buffer.from(storedHash ?? NO_HASH);
  return stored.length === candidate.length && timingSafeEqual(candidate, stored) && storedHash !== null;
}

/** Keystone's access rule methods (keystone/application_credential/schema.py). */
export const ACCESS_RULE_METHODS = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT'] as const;

export interface AccessRule {
  id: string;
  service: string;
  method: (typeof ACCESS_RULE_METHODS)[number];
  path: string;
}

/** Keystone's access rules as a create body carries them; one definition for the gateway and the self-service API. */
export const accessRulesSchema = Joi.array()
  .items(
    Joi.object({
      // Cairn serves only Swift, so only Swift's rules mean anything.
      service: Joi.string().valid('object-store').required().messages({
        'any.only': "The {{#label}} field must be 'object-store': access rules apply to Swift's object store only",
      }),
      method: Joi.string()
        .valid(...ACCESS_RULE_METHODS)
        .required(),
      path: Joi.string()
        .max(225)
        .pattern(/^\//)
        .required()
        .messages({ 'string.pattern.base': "The {{#label}} field must start with '/', as an access rule's path does" }),
      id: Joi.any().strip(),
    }),
  )
  .max(64);

/** Keystone's create body, `{"application_credential": {...}}`, as Cairn accepts it. */
export const applicationCredentialCreateSchema = Joi.object({
  application_credential: Joi.object({
    name: Joi.string().min(1).max(255).required(),
    description: Joi.string().max(255).allow('', null),
    secret: Joi.string()
      .min(MIN_APPLICATION_CREDENTIAL_SECRET)
      .max(1024)
      .allow(null)
      .messages({
        'string.min': `a chosen secret must be at least ${MIN_APPLICATION_CREDENTIAL_SECRET} characters long; leave it out to have one generated`,
      }),
    expires_at: Joi.date().iso().allow(null),
    roles: Joi.array()
      .items(
        Joi.object({ id: Joi.string().max(255), name: Joi.string().max(255), domain_id: Joi.any() }).or('id', 'name'),
      )
      .max(16),
    unrestricted: Joi.boolean(),
    access_rules: accessRulesSchema,
  })
    .required()
    .unknown(false),
}).unknown(true);
