/**
 * Debian's S3 clients, run with nothing from the environment or $HOME: awscli (v2, SigV4), boto3
 * (SigV4, presigned URLs) and s3cmd (SigV2). The explicit /usr/bin paths matter: a pyenv python
 * or aws earlier on PATH would lack the packages.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const AWS = '/usr/bin/aws';
export const PYTHON = '/usr/bin/python3';
export const S3CMD = '/usr/bin/s3cmd';

export interface S3Key {
  access: string;
  secret: string;
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * A client command with a clean environment (`env` on top of a bare PATH and locale), run in its
 * $HOME when `env` names one (no config file of the directory it was started from is read), and
 * killed after 60 s.
 */
export function run(cmd: string, args: string[], env: Record<string, string>, input?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {
      env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', PYTHONNOUSERSITE: '1', ...env },
      cwd: env.HOME,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input ?? '');
  });
}

/** A scratch $HOME for the clients, removed by `close`. */
export class ClientHome {
  readonly dir = mkdtempSync(join(tmpdir(), 'cairn-s3-clients-'));
  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * `aws <args>` against the proxy, path-style, SigV4, with `key`; `s3` adds settings to the config
 * file's `s3` section (multipart_threshold, multipart_chunksize).
 */
export function aws(
  home: ClientHome,
  endpoint: string,
  region: string,
  key: S3Key,
  args: string[],
  s3: Record<string, string> = {},
): Promise<Run> {
  const config = join(home.dir, 'aws-config');
  const settings = Object.entries({ addressing_style: 'path', signature_version: 's3v4', ...s3 });
  writeFileSync(config, `[default]\nregion = ${region}\ns3 =\n${settings.map(([k, v]) => `  ${k} = ${v}\n`).join('')}`);
  return run(AWS, ['--endpoint-url', endpoint, ...args], {
    HOME: home.dir,
    AWS_CONFIG_FILE: config,
    AWS_SHARED_CREDENTIALS_FILE: join(home.dir, 'none'),
    AWS_ACCESS_KEY_ID: key.access,
    AWS_SECRET_ACCESS_KEY: key.secret,
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_PAGER: '',
  });
}

/**
 * Runs a boto3 script: `s3` is a client for the proxy (SigV4, path-style), `args` the JSON given
 * here; the script prints its result as JSON on the last line of stdout.
 */
export async function boto3(
  home: ClientHome,
  endpoint: string,
  region: string,
  key: S3Key,
  script: string,
  args: unknown = null,
): Promise<{ run: Run; result: unknown }> {
  const program = [
    'import json, sys, boto3, botocore',
    'from botocore.config import Config',
    'args = json.loads(sys.stdin.read())',
    `s3 = boto3.client("s3", endpoint_url=${JSON.stringify(endpoint)}, region_name=${JSON.stringify(region)}, aws_access_key_id=${JSON.stringify(key.access)}, aws_secret_access_key=${JSON.stringify(key.secret)}, config=Config(signature_version="s3v4", s3={"addressing_style": "path"}, retries={"max_attempts": 1}))`,
    'def error_code(f):',
    '    try:',
    '        f()',
    '        return None',
    '    except botocore.exceptions.ClientError as e:',
    '        return e.response["Error"]["Code"]',
    script,
  ].join('\n');
  const r = await run(
    PYTHON,
    ['-c', program],
    {
      HOME: home.dir,
      AWS_CONFIG_FILE: join(home.dir, 'none'),
      AWS_SHARED_CREDENTIALS_FILE: join(home.dir, 'none'),
      AWS_EC2_METADATA_DISABLED: 'true',
    },
    JSON.stringify(args),
  );
  const last = r.stdout.trim().split('\n').pop() ?? '';
  let result: unknown;
  try {
    result = JSON.parse(last);
  } catch {
    result = undefined;
  }
  return { run: r, result };
}

/** `s3cmd <args>` against the proxy with signature V2 and a config file of its own. */
export function s3cmd(home: ClientHome, hostPort: string, key: S3Key, args: string[]): Promise<Run> {
  const config = join(home.dir, 's3cfg');
  writeFileSync(
    config,
    [
      '[default]',
      `access_key = ${key.access}`,
      `secret_key = ${key.secret}`,
      `host_base = ${hostPort}`,
      `host_bucket = ${hostPort}`,
      'use_https = False',
      'signature_v2 = True',
      'check_ssl_certificate = False',
      'guess_mime_type = False',
      '',
    ].join('\n'),
  );
  return run(S3CMD, ['-c', config, '--no-progress', ...args], { HOME: home.dir });
}
