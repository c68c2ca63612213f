import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import Joi from 'joi';
import { errors } from '@cairn/domain/errors';
import { apiUrlSchema } from '../config';

/**
 * Named contexts, like kubectl's kubeconfig: where the management API is, as whom, with which key
 * file, and which cluster commands use when --cluster is not given. The file holds no key itself,
 * only the path of a key file, and is written with mode 0600 (its directory 0700) all the same.
 */
export interface Context {
  'api-url': string;
  operator: string;
  'key-file'?: string;
  cluster?: string;
}

export interface ContextFile {
  'current-context'?: string;
  contexts: Record<string, Context>;
}

export const contextNameSchema = Joi.string()
  .pattern(/^[A-Za-z0-9][\w.-]{0,63}$/)
  .message('"{#label}" must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit');

const contextSchema = Joi.object<Context>({
  'api-url': apiUrlSchema.required(),
  operator: Joi.string()
    .pattern(/^[^:\s]+$/)
    .max(64)
    .required(),
  'key-file': Joi.string(),
  cluster: Joi.string().max(255),
});

const fileSchema = Joi.object<ContextFile>({
  'current-context': Joi.string().allow(null),
  contexts: Joi.object().pattern(Joi.string(), contextSchema).default({}),
}).unknown(false);

export const contextsPath = (configHome?: string): string =>
  join(configHome || join(homedir(), '.config'), 'cairn', 'config.yaml');

export async function parseContext(input: unknown): Promise<Context> {
  // The domain's validation (its every schema) loads only for the command that adds a context.
  const { validate } = await import('@cairn/domain');
  return validate<Context>(contextSchema, input);
}

export async function loadContexts(path: string): Promise<ContextFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { contexts: {} };
    throw e;
  }
  // yaml loads when there is a file to read; without one a command does not pay for it.
  const YAML = (await import('yaml')).default;
  const parsed: unknown = YAML.parse(text) ?? {};
  const { error, value } = fileSchema.validate(parsed, { abortEarly: false });
  if (error) throw errors.invalidInput(`${path} is not a valid cairn config file: ${error.message}.`);
  return value;
}

/** Written whole to a temporary file and renamed, so a crash never leaves half a file. */
export async function saveContexts(path: string, file: ContextFile): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  const YAML = (await import('yaml')).default;
  await writeFile(tmp, YAML.stringify(file), { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, path);
}
