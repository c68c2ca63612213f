/**
 * The services under hostile input, each in a process of its own and started as a deployment
 * would start it (readConfig from variables, createDeps, start…): management API replicas on one
 * database (the first migrates and bootstraps it; compose runs two as well) and the auth gateway on
 * Redis. Processes of their own, so the event loops and the load generator's share the cores; a
 * crash or exit of any is seen by the parent.
 */
import type { ChildProcess } from 'node:child_process';
import { createDeps as createApiDeps, readConfig as readApiConfig, startManagementApi } from '@cairn/management-api';
import type { HostileRequest } from '../../test-e2e/hostile/arbitraries';
import { RawPool, type RawResponse } from '../../test-e2e/hostile/raw-http';
import { announceListening, startChild, stopChild, type Child } from './children';
import { serveGateway } from './gateway-child';

export const API_ROLE = 'hostile-api';
export const GATEWAY_ROLE = 'hostile-gateway';

/** The gateway's login limits for the run (see hostileLimits). */
export interface LoginLimits {
  /**
   * Failed logins per name from one address before 429 (CAIRN_LOGIN_FAILURE_LIMIT; the load comes from one address).
   */
  perName: number;
  /** Failed logins per client address before 429 (CAIRN_LOGIN_ADDRESS_FAILURE_LIMIT). */
  perAddress: number;
  /** Seconds both windows last (CAIRN_LOGIN_*_FAILURE_WINDOW). */
  windowSeconds: number;
}

/** Variables of a child; BENCH_HOSTILE_* are read by the children only. */
export interface ServiceSettings {
  databaseUrl: string;
  redisUrl: string;
  adminUser: string;
  adminKey: string;
  limits: LoginLimits;
}

/** In a child: serve `role` until the parent goes away. */
export async function serveHostile(role: string): Promise<void> {
  const env = process.env;
  if (role === API_ROLE) {
    const config = readApiConfig({
      CAIRN_API_HOST: '127.0.0.1',
      CAIRN_API_PORT: '0',
      DATABASE_URL: env.BENCH_HOSTILE_DATABASE_URL,
      CAIRN_ADMIN_USER: env.BENCH_HOSTILE_ADMIN_USER,
      CAIRN_ADMIN_KEY: env.BENCH_HOSTILE_ADMIN_KEY,
      CAIRN_DEFAULT_CLUSTER: 'default',
      LOG_LEVEL: 'silent',
    });
    const running = await startManagementApi(config, createApiDeps(config));
    announceListening(running.port, async () => {
      running.server.closeAllConnections();
      await running.close();
    });
    return;
  }
  if (role === GATEWAY_ROLE) {
    const window = env.BENCH_HOSTILE_LOGIN_WINDOW!;
    await serveGateway('default', {
      DATABASE_URL: env.BENCH_HOSTILE_DATABASE_URL!,
      REDIS_URL: env.BENCH_HOSTILE_REDIS_URL!,
      LOG_LEVEL: 'silent',
      CAIRN_LOGIN_FAILURE_LIMIT: env.BENCH_HOSTILE_LOGIN_PER_NAME!,
      CAIRN_LOGIN_FAILURE_WINDOW: window,
      CAIRN_LOGIN_ADDRESS_FAILURE_LIMIT: env.BENCH_HOSTILE_LOGIN_PER_ADDRESS!,
      CAIRN_LOGIN_ADDRESS_FAILURE_WINDOW: window,
    });
    return;
  }
  throw new Error(`unknown role ${role}`);
}

export interface Services {
  apis: Child[];
  gateway: Child;
  /** Exits that were not asked for, as readable lines. */
  crashes: string[];
  stop: () => Promise<void>;
}

/** Starts the API replicas (the first prepares the database), then the gateway; watches all for exits. */
export async function startServices(
  script: string,
  s: ServiceSettings,
  apiReplicas: number,
  extraExecArgv: string[] = [],
): Promise<Services> {
  const env = {
    ...process.env,
    BENCH_HOSTILE_DATABASE_URL: s.databaseUrl,
    BENCH_HOSTILE_REDIS_URL: s.redisUrl,
    BENCH_HOSTILE_ADMIN_USER: s.adminUser,
    BENCH_HOSTILE_ADMIN_KEY: s.adminKey,
    BENCH_HOSTILE_LOGIN_PER_NAME: String(s.limits.perName),
    BENCH_HOSTILE_LOGIN_PER_ADDRESS: String(s.limits.perAddress),
    BENCH_HOSTILE_LOGIN_WINDOW: String(s.limits.windowSeconds),
  };
  const crashes: string[] = [];
  let stopping = false;
  const watch = (child: Child) => {
    child.proc.on('exit', (code: number | null, signal: string | null) => {
      if (!stopping) crashes.push(`${child.role} exited (code ${code}, signal ${signal})`);
    });
  };
  const started: Child[] = [];
  const stop = async () => {
    stopping = true;
    await Promise.all(started.map(stopChild));
  };
  const start = async (role: string) => {
    const child = await startChild(script, role, env, extraExecArgv);
    started.push(child);
    watch(child);
    return child;
  };
  try {
    const apis = [await start(API_ROLE)];
    // The others after the first: it alone runs the migrations on the empty database.
    apis.push(...(await Promise.all(Array.from({ length: apiReplicas - 1 }, () => start(API_ROLE)))));
    const gateway = await start(GATEWAY_ROLE);
    return { apis, gateway, crashes, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

export const pidOf = (c: Child): number => (c.proc as ChildProcess).pid!;

/** The management API's replicas in turn, one pool each, and the gateway's pool. */
export class ReplicaTargets {
  private turn = 0;
  constructor(
    private readonly api: RawPool[],
    private readonly gateway: RawPool,
  ) {}
  send(req: HostileRequest): Promise<RawResponse> {
    if (req.service === 'gateway') return this.gateway.send(req);
    this.turn = (this.turn + 1) % this.api.length;
    return this.api[this.turn]!.send(req);
  }
  close(): void {
    for (const p of [...this.api, this.gateway]) p.close();
  }
}
