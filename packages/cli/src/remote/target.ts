import { readFile } from 'node:fs/promises';
import { errors } from '@cairn/domain';
import type { ApiTarget } from '../api-client';
import type { CliSettings } from '../config';
import { contextsPath, loadContexts, type Context } from './contexts';

export const DEFAULT_API_URL = 'http://127.0.0.1:8000';

export interface Target extends ApiTarget {
  /** The context's default cluster, for commands whose --cluster is left out. */
  cluster?: string;
}

/** The context a command uses: --context, else CAIRN_CONTEXT, else the file's current one (if any). */
export async function currentContext(settings: CliSettings, asked?: string): Promise<[string, Context] | undefined> {
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

/** "<operator>:<key>" from a key file that holds either the key alone or the whole pair. */
export async function keyFromFile(path: string, operator: string): Promise<string> {
  const text = (await readFile(path, 'utf8')).trim();
  if (!text) throw errors.invalidInput(`The key file ${path} is empty.`);
  return text.includes(':') ? text : `${operator}:${text}`;
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
