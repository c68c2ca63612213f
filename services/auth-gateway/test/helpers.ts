import { Writable } from 'node:stream';
import { createLogger, startAuthGateway, type Deps, type GatewayConfig, type RunningGateway } from '../src';

/** Log lines a test can read back, parsed. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  }
  get text(): string {
    return this.lines.join('\n');
  }
}

export const TEST_CONFIG: GatewayConfig = { host: '127.0.0.1', port: 0, cluster: 'default', logLevel: 'info' };

/** A gateway listening on a free port of 127.0.0.1, logging into memory. */
export async function startTestGateway(extra: Partial<Deps> = {}): Promise<{ gw: RunningGateway; url: string; logs: LogCapture }> {
  const logs = new LogCapture();
  const gw = await startAuthGateway(TEST_CONFIG, { log: createLogger('info', logs), ...extra });
  return { gw, url: `http://127.0.0.1:${gw.port}`, logs };
}
