import Joi from 'joi';

/**
 * A service's configuration is a table of entries, each with its environment variable, a doc line
 * and a default. `loadConfig` reads them all at once, supports `<NAME>_FILE` for secrets (the value
 * is the file's content, as Docker/Kubernetes secrets deliver it), and reports every problem together.
 * It takes the environment and the file reader as arguments so only a service's config.ts touches
 * process.env.
 */
export interface ConfigEntry {
  env: string;
  doc: string;
  schema: Joi.Schema;
  /** Secret values may come from `<env>_FILE` and are never printed. */
  secret?: boolean;
}

export type ConfigSpec = Record<string, ConfigEntry>;

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

export type Env = Record<string, string | undefined>;
export type ReadFile = (path: string) => string;

export function loadConfig<T>(spec: ConfigSpec, env: Env, readFile: ReadFile): T {
  const raw: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, entry] of Object.entries(spec)) {
    const fileVar = `${entry.env}_FILE`;
    const direct = env[entry.env];
    const file = entry.secret ? env[fileVar] : undefined;
    if (direct !== undefined && direct !== '' && file) {
      problems.push(`${entry.env} and ${fileVar} are both set; use one.`);
      continue;
    }
    if (file) {
      try {
        raw[key] = readFile(file).replace(/\r?\n$/, '');
      } catch (e) {
        problems.push(`${fileVar}: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'}).`);
      }
    } else if (direct !== undefined && direct !== '') {
      raw[key] = direct;
    }
  }
  const keys = Object.fromEntries(Object.entries(spec).map(([k, e]) => [k, e.schema]));
  const { error, value } = Joi.object(keys).validate(raw, { abortEarly: false, convert: true });
  for (const d of error?.details ?? []) {
    const entry = spec[String(d.path[0])];
    const shown = entry?.secret ? '(secret)' : JSON.stringify(raw[String(d.path[0])]);
    problems.push(
      `${entry?.env ?? d.path.join('.')}=${shown}: ${d.message.replace(/^"[^"]*" /, '')} — ${entry?.doc ?? ''}`,
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return value as T;
}

/** A Markdown table of the spec, for docs/operations.md and `cairn config`. */
export function describeConfig(spec: ConfigSpec): string {
  const rows = Object.values(spec).map((e) => {
    const def = e.schema.describe().flags as { default?: unknown } | undefined;
    const shown = def?.default === undefined ? '—' : `\`${String(def.default)}\``;
    return `| \`${e.env}\`${e.secret ? ` (or \`${e.env}_FILE\`)` : ''} | ${shown} | ${e.doc} |`;
  });
  return ['| variable | default | meaning |', '| --- | --- | --- |', ...rows].join('\n');
}
export { passwordHashConfig, type PasswordHashSettings } from './password-hash';
export { s3KeyringConfig } from './s3-keys';
export { trustProxySchema, type TrustProxy } from './trust-proxy';
