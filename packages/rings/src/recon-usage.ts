import { pollNodes } from '@cairn/swift-cluster';
import { usageKey, type DeviceUsage } from './types';

/**
 * The devices' used and total bytes from each storage node's /recon/diskusage. A node that does
 * not answer leaves its devices out (their usage is then null in the plan, and the plan says so).
 */
export function reconUsage(options: { timeoutMs: number; concurrency?: number }) {
  return async (nodes: Array<{ ip: string; port: number }>): Promise<Map<string, DeviceUsage>> => {
    const polled = await pollNodes(nodes, { timeoutMs: options.timeoutMs, concurrency: options.concurrency ?? 16 });
    const usage = new Map<string, DeviceUsage>();
    for (const n of polled) {
      if (!n.ok) continue;
      for (const d of n.devices)
        if (d.mounted && d.used !== null && d.size !== null)
          usage.set(usageKey({ ip: n.node.ip, port: n.node.port, device: d.device }), { used: d.used, size: d.size });
    }
    return usage;
  };
}
