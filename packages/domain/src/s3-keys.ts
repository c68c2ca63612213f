import { randomBytes, randomInt } from 'node:crypto';

/**
 * S3 credentials look like AWS's, so that every S3 client and tool accepts them as they are: an
 * access key of 20 upper-case letters and digits (≈103 random bits; it names the credential and
 * is not secret) and a secret of 40 base64 characters (240 random bits).
 */
const ACCESS_KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
export const S3_ACCESS_KEY_LENGTH = 20;
export const S3_SECRET_LENGTH = 40;
export const S3_ACCESS_KEY_PATTERN = /^[A-Z0-9]{20}$/;

/** A fresh access key from the CSPRNG; randomInt draws without modulo bias. */
export function generateS3AccessKey(): string {
  let key = '';
  for (let i = 0; i < S3_ACCESS_KEY_LENGTH; i++) key += ACCESS_KEY_ALPHABET[randomInt(ACCESS_KEY_ALPHABET.length)];
  return key;
}

/** A fresh secret: 30 CSPRNG bytes are exactly 40 base64 characters, no padding. */
export function generateS3Secret(): string {
  return randomBytes((S3_SECRET_LENGTH / 4) * 3).toString('base64');
}

/** True for a string shaped like a generated access key (e.g. to validate a URL segment). */
export const isS3AccessKey = (text: string): boolean => S3_ACCESS_KEY_PATTERN.test(text);
