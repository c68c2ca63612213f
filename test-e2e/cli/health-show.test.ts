import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cairn } from '../support/processes';
import { ADMIN, createCluster, startTestApp, type TestApp } from '../../services/management-api/test/support/harness';

/** `cairn health show` against a real management API on Postgres, after a round with findings. */
describe('cairn health show', () => {
  let app: TestApp;
  let dir: string;
  let env: Record<string, string>;
  const at = new Date(Date.now() - 60_000);

  beforeAll(async () => {
    app = await startTestApp('postgres');
    dir = mkdtempSync(join(tmpdir(), 'cairn-health-'));
    env = { XDG_CONFIG_HOME: dir, CAIRN_API_URL: app.baseUrl, CAIRN_API_KEY: `${ADMIN.name}:${ADMIN.key}` };
    const cluster = await createCluster(app, 'health-cli');
    const res = await app
      .http()
      .post(`/api/v1/clusters/${cluster.id}/health/rounds/`)
      .set('Authorization', `ApiKey ${ADMIN.name}:${ADMIN.key}`)
      .send({
        collected_at: at.toISOString(),
        ring_md5: {},
        nodes: [
          {
            node: '10.0.0.3:6200',
            server_types: ['object'],
            answered: true,
            error: null,
            elapsed_ms: 10,
            recon: { unmounted: [{ device: 'sdb1', mounted: false }], time: at.getTime() / 1000 },
          },
          { node: '10.0.0.4:6200', server_types: ['object'], answered: false, error: 'timed out', elapsed_ms: 2000 },
        ],
      });
    if (res.status !== 201) throw new Error(`round: ${res.status} ${res.text}`);
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('when asked for JSON, then the API answer: status, findings and nodes', async () => {
    const run = await cairn(['health', 'show', '--cluster', 'health-cli', '-o', 'json'], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const shown = JSON.parse(run.stdout) as { status: string; findings: Array<{ code: string }>; nodes: unknown[] };
    expect(shown.status).toBe('critical');
    expect(shown.findings.map((f) => f.code).sort()).toEqual(['drive_unmounted', 'node_silent']);
    expect(shown.nodes).toHaveLength(2);
  });

  it('when shown as a table, then the status line, then the findings worst first', async () => {
    const run = await cairn(['health', 'show', '--cluster', 'health-cli'], env);
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(
      `cluster ${lines[0]!.split(' ')[1]!.replace(':', '')}: critical, 2 open finding(s); 1 of 2 node(s) answered the round of ${at.toISOString()}`,
    );
    expect(lines[1]).toMatch(/^SEVERITY\s+CODE\s+NODE\s+DEVICE/);
    expect(lines[2]).toMatch(/^critical\s+node_silent\s+10\.0\.0\.4:6200/);
    expect(lines[3]).toMatch(/^warning\s+drive_unmounted\s+10\.0\.0\.3:6200\s+sdb1/);
  });

  it('when the cluster does not exist, then exit 3 with a sentence', async () => {
    const run = await cairn(['health', 'show', '--cluster', 'nowhere'], env);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('nowhere');
  });
});
