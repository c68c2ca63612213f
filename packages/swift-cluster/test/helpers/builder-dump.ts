import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** What `swift-ring-builder <builder>` printed (test/fixtures/builder-output/<name>.txt). */
export interface BuilderDump {
  partitions: number;
  replicas: number;
  devices: {
    id: number;
    region: number;
    zone: number;
    ip: string;
    port: number;
    replicationIp: string;
    replicationPort: number;
    device: string;
    weight: string;
    partitions: number;
    meta: string;
  }[];
}

const HOST_PORT = /^(.*):(\d+)$/;

function hostPort(text: string): [string, number] {
  const m = HOST_PORT.exec(text);
  if (!m) throw new Error(`not ip:port: ${text}`);
  return [m[1] as string, Number(m[2])];
}

/** Parses the summary line and the device table (meta values in the fixtures have no spaces). */
export function readBuilderDump(name: string): BuilderDump {
  const text = readFileSync(join(__dirname, '..', 'fixtures', 'builder-output', `${name}.txt`), 'utf8');
  const summary = /^(\d+) partitions, ([\d.]+) replicas,/m.exec(text);
  if (!summary) throw new Error(`no summary line in ${name}.txt`);
  const table = text.slice(text.indexOf('Devices:'));
  const devices = table
    .split('\n')
    .slice(1)
    .filter((line) => /^\s+\d+\s/.test(line))
    .map((line) => {
      const [id, region, zone, ipPort, replication, device, weight, partitions, _balance, ...rest] = line
        .trim()
        .split(/\s+/);
      const [ip, port] = hostPort(ipPort as string);
      const [replicationIp, replicationPort] = hostPort(replication as string);
      const meta = rest.filter((t) => t !== 'DEL').join(' ');
      return {
        id: Number(id),
        region: Number(region),
        zone: Number(zone),
        ip,
        port,
        replicationIp,
        replicationPort,
        device: device as string,
        weight: weight as string,
        partitions: Number(partitions),
        meta,
      };
    });
  return { partitions: Number(summary[1]), replicas: Number(summary[2]), devices };
}
