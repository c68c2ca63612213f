import type { NodeDiskUsage, SwiftDir } from '@cairn/swift-cluster';

/** The body of PUT /api/v1/clusters/<id>/devices/ (see the management API's device report). */
export interface DeviceReportBody {
  policies: Array<{ index: number; name: string; default: boolean }>;
  devices: Array<{
    node: string;
    device: string;
    policies: string[];
    size_bytes: number | null;
    used_bytes: number | null;
    avail_bytes: number | null;
    mounted: boolean;
  }>;
}

export interface CollectedReport {
  body: DeviceReportBody;
  /** One line per node that could not be read, and per ring device recon does not list. */
  warnings: string[];
  /** Devices with usage in this report. */
  reported: number;
}

/** `ip:port` as a node is named in reports (an IPv6 address in brackets). */
export const nodeKey = (ip: string, port: number): string => (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);

/** The storage nodes of every object ring, once each. */
export function storageNodes(swift: SwiftDir): Array<{ ip: string; port: number }> {
  const nodes = new Map<string, { ip: string; port: number }>();
  for (const ring of swift.rings.values())
    for (const d of ring.devices) nodes.set(nodeKey(d.ip, d.port), { ip: d.ip, port: d.port });
  return [...nodes.values()];
}

/**
 * Joins ring membership with recon's disk usage. A device belongs to every policy whose object ring
 * lists it (matched by ip, port and device name; ring-local ids differ between rings). Recon's
 * `used` counts root-reserved blocks as used, so the report carries used = size − avail and
 * avail = recon's avail: raw capacity then includes the reserved blocks (recon cannot separate
 * them; a node agent with statvfs can send exact figures through the same API). A device whose
 * node could not be read, that recon does not list, or that is not mounted is reported without
 * usage, so it stays out of the statistics instead of counting as empty.
 */
export function buildDeviceReport(swift: SwiftDir, polled: readonly NodeDiskUsage[]): CollectedReport {
  const warnings: string[] = [];
  const usageByNode = new Map<
    string,
    Map<string, { size: number | null; used: number | null; avail: number | null; mounted: boolean }>
  >();
  for (const result of polled) {
    const key = nodeKey(result.node.ip, result.node.port);
    if (!result.ok) {
      warnings.push(`node ${key}: ${result.error.message}; its devices are reported without usage`);
      continue;
    }
    usageByNode.set(key, new Map(result.devices.map((d) => [d.device, d])));
  }

  const devices = new Map<string, DeviceReportBody['devices'][number]>();
  for (const policy of swift.policies) {
    const ring = swift.rings.get(policy.index);
    if (!ring) continue;
    for (const d of ring.devices) {
      const node = nodeKey(d.ip, d.port);
      const id = `${node}/${d.device}`;
      const existing = devices.get(id);
      if (existing) {
        if (!existing.policies.includes(policy.name)) existing.policies.push(policy.name);
        continue;
      }
      const nodeUsage = usageByNode.get(node);
      const usage = nodeUsage?.get(d.device);
      if (nodeUsage && !usage)
        warnings.push(`node ${node}: recon does not list device ${d.device}; reported without usage`);
      const reported = usage?.mounted === true && usage.size !== null && usage.avail !== null;
      devices.set(id, {
        node,
        device: d.device,
        policies: [policy.name],
        size_bytes: reported ? usage.size : null,
        used_bytes: reported ? usage.size! - usage.avail! : null,
        avail_bytes: reported ? usage.avail : null,
        mounted: reported,
      });
    }
  }
  const list = [...devices.values()];
  return {
    body: {
      policies: swift.policies.map((p) => ({ index: p.index, name: p.name, default: p.isDefault })),
      devices: list,
    },
    warnings,
    reported: list.filter((d) => d.mounted).length,
  };
}
