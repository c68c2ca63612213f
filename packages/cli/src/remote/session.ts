import type { Command } from 'commander';
import { errors } from '@cairn/domain/errors';
import type { CollectorConfig } from '../config';
import { findCluster } from '../utilization/client';
import { resolveTarget, type Target } from './target';

/** The API a resource command calls: environment, then --context / the current context. */
export async function targetOf(cmd: Command): Promise<Target> {
  // The settings' joi schemas load when a command runs, not for --help or --version.
  const { readCliSettings } = await import('../config');
  const target = await resolveTarget(readCliSettings(), cmd.optsWithGlobals<{ context?: string }>().context);
  if (!target.apiKey) {
    throw errors.unauthenticated(
      `No API key for ${target.apiUrl}: add a context ('cairn context add <name> --api-url <url> --operator <name> --key-file <path>') or set CAIRN_API_KEY_FILE.`,
    );
  }
  return target;
}

/** The cluster id a command works on: --cluster <id|name>, else the context's default cluster. */
export async function clusterIdOf(target: Target, asked: string | undefined): Promise<number> {
  const cluster = asked ?? target.cluster;
  if (!cluster)
    throw errors.invalidInput(
      "Name the cluster: --cluster <id|name> (or give the context a default with 'cairn context add … --cluster <name>').",
    );
  return (await findCluster(target, cluster)).id;
}

/** Collects a repeatable option's values (`--filter a=1 --filter b=2`). */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** The collectors' settings, their API and key resolved like every other command's. */
export async function collectorConfigOf(cmd: Command): Promise<CollectorConfig> {
  const { readCliSettings } = await import('../config');
  const settings = readCliSettings();
  const target = await resolveTarget(settings, cmd.optsWithGlobals<{ context?: string }>().context);
  return { ...settings, apiUrl: target.apiUrl, apiKey: target.apiKey };
}
