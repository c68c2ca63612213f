import Joi from 'joi';
import { accessRulesSchema } from './application-credential';
import { s3CredentialCreateSchema } from './validation';

/**
 * What a signed-in storage user sends to make its own keys (/api/v1/self/…). The management API
 * passes these on to the cluster's gateway with the user's own token, so the shapes are the
 * gateway's (Keystone's) less what the session already fixes: whose credential it is, its roles
 * (the token's) and its secret (always generated, shown once).
 */

/** An S3 credential: only when it ends, if ever; the same rule as an operator's `expires_at`. */
export const selfS3CredentialCreateSchema = Joi.object({
  expires_at: s3CredentialCreateSchema.extract('expires_at'),
});

export interface SelfS3CredentialInput {
  expires_at?: Date | null;
}

const NAME_RULE = 'is required: 1 to 255 characters, unique among your application credentials';

/** An application credential, as Keystone's create body has it, without `secret` and `roles`. */
export const selfApplicationCredentialCreateSchema = Joi.object({
  name: Joi.string()
    .min(1)
    .max(255)
    .required()
    .messages({
      'any.required': `The {{#label}} field ${NAME_RULE}.`,
      'string.empty': `The {{#label}} field ${NAME_RULE}.`,
      'string.max': `The {{#label}} field ${NAME_RULE}.`,
    }),
  description: Joi.string().max(255).allow('', null),
  expires_at: s3CredentialCreateSchema.extract('expires_at'),
  unrestricted: Joi.boolean().default(false),
  access_rules: accessRulesSchema,
});

export interface SelfApplicationCredentialInput {
  name: string;
  description?: string | null;
  expires_at?: Date | null;
  unrestricted: boolean;
  access_rules?: Array<{ service: 'object-store'; method: string; path: string }>;
}
