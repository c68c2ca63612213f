import { readFile } from 'node:fs/promises';
import { errors } from '@cairn/domain/errors';
import type { ApiTarget } from '../api-client';
import type { CliSettings } from '../config';
import type { Context } from './contexts';

export const DEFAULT_API_URL = 'http://127.0.0.1:8000';

export interface Target extends ApiTarget {
  /** The context's default cluster, for commands whose --cluster is left out. */
  cluster?: string;
}

/** The context a command uses: --context, else CAIRN_CONTEXT, else the file's current one (if any). */
export async function currentContext(settings: CliSettings, asked?: string): Promise<[string, Context] | undefined> {
  // The contexts file's schema loads when a command needs its target, not for --help or --version.
  const { contextsPath, loadContexts } = await import('./contexts');
  const path = contextsPath(settings.configHome);
  const file = await loadContexts(path);
  const name = asked ?? settings.context ?? file['current-context'];
  if (name === undefined || name === null) return undefined;
  const context = file.contexts[name];
  if (!context) {
    const known = Object.keys(file.contexts);
    throw errors.notFound(
      `No context named '${name}' in ${path}${known.length ? ` (there are: ${known.join(', ')})` : ''}; add it with 'cairn context add ${name} …'.`,
    );
  }
  return [name, context];
}

/**
 * "<operator>:<key>" from what a person gave as the key (`where` names it): the key alone or the
 * whole pair. The header line the start banner prints ("Authorization: ApiKey admin:…") is refused
 * with a sentence: taken as a key it would make every call fail with a 401 that names no cause.
 */
export function keyPair(text: string, operator: string, where: string): string {
  const key = text.trim();
  if (!key) throw errors.invalidInput(`${where} is empty.`);
  if (/^(authorization\s*:|apikey\s)/i.test(key))
    throw errors.invalidInput(
      `${where} holds an HTTP header line ('${/^authorization/i.test(key) ? 'Authorization: ApiKey' : 'ApiKey'} …'), not a key: give only what follows 'ApiKey ', the "<operator>:<key>" pair or the key alone.`,
    );
  if (/\s/.test(key)) throw errors.invalidInput(`${where} holds spaces; an API key has none.`);
  return key.includes(':') ? key : `${operator}:${key}`;
}

/** "<operator>:<key>" from a key file that holds either the key alone or the whole pair. */
export async function keyFromFile(path: string, operator: string): Promise<string> {
  return keyPair(await readFile(path, 'utf8'), operator, `The key file ${path}`);
}

/**
 * Where the management API is and which key to send. The environment (CAIRN_API_URL, CAIRN_API_KEY
 * or CAIRN_API_KEY_FILE) wins over the context, as kubectl's flags win over its kubeconfig.
 */
export async function resolveTarget(settings: CliSettings, asked?: string): Promise<Target> {
  const found = await currentContext(settings, asked);
  const context = found?.[1];
  const apiUrl = settings.apiUrl ?? context?.['api-url'] ?? DEFAULT_API_URL;
  let apiKey = settings.apiKey;
  if (apiKey === undefined && context?.['key-file']) apiKey = await keyFromFile(context['key-file'], context.operator);
  return { apiUrl, apiKey, cluster: context?.cluster };
}
