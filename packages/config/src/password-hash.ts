import { parseScryptSetting, type ScryptParams } from '@cairn/domain/password-hash';
import Joi from 'joi';

/**
 * The scrypt parameters new password hashes are made with, the same in the management API (which
 * hashes the passwords it is given), every gateway (which checks unknown users against a hash made
 * with them, so that an unknown name costs what a known one does, and re-hashes imported users)
 * and `cairn users import` (which hashes passwords before it sends them). Read as the domain's
 * parseScryptSetting reads them, so a value past its bounds is refused with its sentence at start-up.
 */
export const passwordHashConfig = {
  passwordHashParams: {
    env: 'CAIRN_PASSWORD_HASH_PARAMS',
    doc: "scrypt parameters new password hashes are made with, as the hashes write them: `ln=<log2 N>,r=<block size>,p=<parallelism>`, at least 1 MiB and at most four times the default's work and memory; the same in the management API, every gateway and where `cairn users import` runs (it hashes the passwords it is given). Existing hashes keep their own until the password changes. Unset: Cairn's default, `ln=15,r=8,p=3` (32 MiB). Lower only for test systems: a cheaper hash is cheaper to crack.",
    schema: Joi.string()
      .max(32)
      .custom((text: string): ScryptParams => {
        const parsed = parseScryptSetting(text);
        if ('problem' in parsed) throw new Error(parsed.problem);
        return parsed.params;
      }, 'scrypt parameters')
      .messages({ 'any.custom': '{{#error.message}}' }),
  },
};

/** The settings passwordHashConfig adds; unset: DEFAULT_SCRYPT_PARAMS (@cairn/domain). */
export interface PasswordHashSettings {
  passwordHashParams?: ScryptParams;
}
