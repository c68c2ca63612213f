import type { Command } from 'commander';
import { withOutput, type OutputOptions } from '../remote/output';
import { CLUSTER_LOOKUP } from '../remote/names';
import { addDelete, addList, addShow, call, idOf, print, withIdArgument, type ResourceView } from '../remote/resource';
import { targetOf } from '../remote/session';

const VIEW: ResourceView = {
  path: '/api/v1/clusters/',
  noun: 'cluster',
  columns: ['id', 'name', 'region', 'health', 'auth_url', 'storage_url'],
  lookup: CLUSTER_LOOKUP,
  describe: (c) => `cluster '${String(c.name)}' (id ${String(c.id)})`,
};

interface ClusterFlags extends OutputOptions {
  name?: string;
  authUrl?: string;
  storageUrl?: string;
  region?: string;
}

const bodyOf = (f: ClusterFlags) =>
  Object.fromEntries(
    Object.entries({ name: f.name, auth_url: f.authUrl, storage_url: f.storageUrl, region: f.region }).filter(
      ([, v]) => v !== undefined,
    ),
  );

export function registerClusters(program: Command): void {
  const clusters = program.command('clusters').description('the Swift clusters Cairn manages (management API)');
  addList(clusters, VIEW);
  addShow(clusters, VIEW);
  withOutput(clusters.command('create').description('create a cluster'))
    .requiredOption('--name <name>', 'unique name')
    .requiredOption('--auth-url <url>', "public address of the cluster's auth gateway")
    .requiredOption('--storage-url <url>', "the Swift proxy's base URL, e.g. https://swift.example.com/v1")
    .option('--region <region>', 'region shown in Keystone catalogs (default RegionOne)')
    .action(async (flags: ClusterFlags, cmd: Command) => {
      await print(
        await call(await targetOf(cmd), 'POST', VIEW.path, 'creating the cluster', 201, bodyOf(flags)),
        VIEW,
        flags,
      );
    });
  withIdArgument(withOutput(clusters.command('update').description("change a cluster's name, URLs or region")), VIEW)
    .option('--name <name>', 'new name')
    .option('--auth-url <url>', 'new auth URL')
    .option('--storage-url <url>', 'new storage URL')
    .option('--region <region>', 'new region')
    .action(async (given: string, flags: ClusterFlags, cmd: Command) => {
      const target = await targetOf(cmd);
      const id = await idOf(target, VIEW, given, {});
      await print(
        await call(
          target,
          'PATCH',
          `${VIEW.path}${encodeURIComponent(id)}/`,
          `changing cluster ${given}`,
          202,
          bodyOf(flags),
        ),
        VIEW,
        flags,
      );
    });
  addDelete(clusters, VIEW, ' (refused while it has users)', true);
}
