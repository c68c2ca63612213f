import type { Command } from 'commander';
import { api, apiError } from '../api-client';
import { render, withOutput, type OutputOptions } from '../remote/output';
import { clusterIdOf, targetOf } from '../remote/session';

interface HealthAnswer {
  status: string;
  collected_at: string | null;
  findings: Array<Record<string, unknown>>;
  nodes: Array<Record<string, unknown>>;
}

const FINDING_COLUMNS = ['severity', 'code', 'node', 'device', 'ring_set', 'since', 'sentence'];

/**
 * `cairn health show`: a cluster's health as GET …/health/ answers it. The table is the status
 * line and the open findings, worst first; JSON and YAML are the API's whole answer (nodes too).
 */
export function addHealthShowCommand(health: Command): void {
  withOutput(health.command('show').description("a cluster's health: its status and open findings, worst first"))
    .option('--cluster <id|name>', "the cluster (default: the context's cluster)")
    .action(async (opts: OutputOptions & { cluster?: string }, cmd: Command) => {
      const target = await targetOf(cmd);
      const id = await clusterIdOf(target, opts.cluster);
      const r = await api(target, 'GET', `/api/v1/clusters/${id}/health/`);
      if (r.status !== 200) throw apiError(`reading the health of cluster ${id}`, r);
      const answer = r.json as HealthAnswer;
      if (opts.output === 'json' || opts.output === 'yaml') {
        process.stdout.write(await render(answer as unknown as Record<string, unknown>, [], opts));
        return;
      }
      const rank = (f: Record<string, unknown>) => (f.severity === 'critical' ? 0 : 1);
      const findings = [...answer.findings].sort((a, b) => rank(a) - rank(b));
      if (opts.output === 'table' && !opts.quiet) {
        const answered = answer.nodes.filter((n) => n.answered).length;
        process.stdout.write(
          answer.collected_at === null
            ? `cluster ${id}: unknown (no health round yet; run 'cairn health collect')\n`
            : `cluster ${id}: ${answer.status}, ${findings.length} open finding(s); ${answered} of ${answer.nodes.length} node(s) answered the round of ${answer.collected_at}\n`,
        );
        if (findings.length === 0) return;
      }
      process.stdout.write(await render(findings, FINDING_COLUMNS, opts));
    });
}
