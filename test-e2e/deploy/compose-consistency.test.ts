import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configSpec as gatewaySpec } from '@cairn/auth-gateway';
import { configSpec as apiSpec } from '@cairn/management-api';
// The CLI is a command, not a library: its config spec is read from its source.
import { collectorConfigSpec } from '../../packages/cli/src/config';

/**
 * Cheap checks that the deployment files agree with each other and with the code, so a renamed
 * config key, secret or service breaks `pnpm test` instead of a container start. The stack itself
 * is proven by running it (docs/deployment.md; deploy/compose-smoke.sh), which is
 * too slow for `pnpm test`. No YAML parser is a dependency here, so the compose file is read as
 * text; it is written in plain block style for that reason.
 */
const root = join(__dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
// Without its comment lines: the comments name settings the file deliberately does not use.
const compose = read('docker-compose.yml').replace(/^\s*#.*\n/gm, '');
const nginx = read('deploy/nginx/cairn.conf');
const secretsScript = read('deploy/secrets/init-secrets.sh');
const tlsCompose = read('docker-compose.tls.yml').replace(/^\s*#.*\n/gm, '');
const tlsNginx = read('deploy/nginx/cairn-tls.conf');

/** Each `server { … }` block of an nginx file: its listen line and its locations with their targets. */
function nginxServers(conf: string): Array<{ listen: string; locations: string[]; upstreams: string[] }> {
  return [...conf.matchAll(/^server \{\n([\s\S]*?)^\}/gm)].map((m) => ({
    listen: /^\s+listen ([^;]+);/m.exec(m[1]!)![1]!,
    locations: [...m[1]!.matchAll(/location ([^{]+?) \{\s*([^}]*?);\s*\}/g)].map((l) => `${l[1]} -> ${l[2]}`),
    upstreams: [...m[1]!.matchAll(/proxy_pass http:\/\/(\w+);/g)].map((u) => u[1]!),
  }));
}

const serviceNames = (() => {
  const body = compose.slice(compose.indexOf('\nservices:\n'), compose.indexOf('\nvolumes:\n'));
  return [...body.matchAll(/^ {2}([a-z0-9-]+):\s*$/gm)].map((m) => m[1]!);
})();

/** Every `NAME: value` line whose key looks like an environment variable. */
const envKeys = [...new Set([...compose.matchAll(/^\s+([A-Z][A-Z0-9_]*):/gm)].map((m) => m[1]!))];

const knownKeys = (spec: Record<string, { env: string; secret?: boolean }>) =>
  Object.values(spec).flatMap((e) => (e.secret ? [e.env, `${e.env}_FILE`] : [e.env]));

describe('docker-compose.yml, deploy/ and the Dockerfiles', () => {
  it('when the compose file sets an environment variable, then a service config or an image knows it', () => {
    const images = ['POSTGRES_USER', 'POSTGRES_DB', 'SECRETS_DIR', 'CAIRN_CLUSTERS'];
    const known = new Set([
      ...knownKeys(apiSpec),
      ...knownKeys(gatewaySpec),
      ...knownKeys(collectorConfigSpec),
      ...images,
    ]);
    expect(envKeys.length).toBeGreaterThan(10);
    expect(envKeys.filter((k) => !known.has(k))).toEqual([]);
  });

  it('when a value is a secret, then it comes through <ENV>_FILE and the secrets job generates that file', () => {
    expect(compose).not.toMatch(
      /^\s+(DATABASE_URL|REDIS_URL|CAIRN_ADMIN_KEY|CAIRN_GATEWAY_SIGNING_KEY|POSTGRES_PASSWORD):/m,
    );
    const clusters = /CAIRN_CLUSTERS: (.+)$/m.exec(compose)![1]!.trim().split(/\s+/);
    const generated = new Set([
      ...[...secretsScript.matchAll(/^put ([a-z0-9.-]+) /gm)].map((m) => m[1]),
      ...clusters.flatMap((c) => [`signing-key-${c}`, `collector-${c}-api-key`, `collector-${c}-password`]),
    ]);
    const referenced = [...new Set([...compose.matchAll(/\/run\/secrets\/cairn\/([a-z0-9.-]+)/g)].map((m) => m[1]))];
    expect(referenced.length).toBeGreaterThan(5);
    expect(referenced.filter((f) => !generated.has(f))).toEqual([]);
  });

  it('when a gateway serves a cluster, then the migrate job declares it and the secrets job makes its signing key', () => {
    const served = [...new Set([...compose.matchAll(/CAIRN_GATEWAY_CLUSTER: (\S+)/g)].map((m) => m[1]))];
    const declared = [...compose.matchAll(/- name=([a-z0-9-]+),auth_url=/g)].map((m) => m[1]);
    expect(served.sort()).toEqual(['east', 'west']);
    expect(declared.sort()).toEqual(served);
    expect(/CAIRN_CLUSTERS: (.+)$/m.exec(compose)![1]!.trim().split(/\s+/).sort()).toEqual(served);
  });

  it('when nginx proxies to a replica, then a compose service of that name exists, two per upstream', () => {
    const upstreams = [...nginx.matchAll(/upstream (\S+) \{([^}]*)\}/g)];
    expect(upstreams.map((u) => u[1])).toEqual(['cairn_management_api', 'cairn_gateway_east', 'cairn_gateway_west']);
    for (const [, , body] of upstreams) {
      const servers = [...(body ?? '').matchAll(/server ([a-z0-9-]+):\d+/g)].map((m) => m[1]);
      expect(servers).toHaveLength(2);
      for (const s of servers) expect(serviceNames).toContain(s);
    }
    for (const s of ['postgres', 'redis', 'secrets', 'migrate', 'nginx']) expect(serviceNames).toContain(s);
  });

  it('when the TLS override is used, then nginx gets cairn-tls.conf beside cairn.conf and the certificate directory it names', () => {
    expect(tlsCompose).toMatch(/^services:\n {2}nginx:\n {4}volumes:\n/m);
    expect(tlsCompose).toContain('- ./deploy/nginx/cairn-tls.conf:/etc/nginx/conf.d/cairn-tls.conf:ro');
    // Beside, not instead of, the base file's default.conf: the upstreams are defined there once.
    expect(compose).toContain('- ./deploy/nginx/cairn.conf:/etc/nginx/conf.d/default.conf:ro');
    expect(tlsCompose).toMatch(/- \$\{CAIRN_TLS_DIR:\?[^}]+\}:\/etc\/nginx\/tls:ro/);
    for (const file of [...tlsNginx.matchAll(/^ssl_certificate(?:_key)? (\S+);/gm)].map((m) => m[1]!))
      expect(file).toMatch(/^\/etc\/nginx\/tls\/cairn\.(crt|key)$/);
    expect(tlsNginx).toMatch(/^ssl_protocols TLSv1\.2 TLSv1\.3;$/m);
    expect(tlsNginx).not.toMatch(/^upstream /m);
  });

  it('when nginx terminates TLS, then each upstream of cairn.conf has one TLS listener, published by the override, serving the same paths as its plain one', () => {
    const plain = nginxServers(nginx);
    const tls = nginxServers(tlsNginx);
    expect(tls.map((t) => t.listen)).toEqual(['8443 ssl', '5443 ssl', '5444 ssl']);
    const upstreams = [...nginx.matchAll(/upstream (\S+) \{/g)].map((m) => m[1]);
    expect(tls.map((t) => t.upstreams[0])).toEqual(upstreams);
    for (const server of tls) {
      expect(server.locations.length).toBeGreaterThan(0);
      expect(new Set(server.upstreams).size).toBe(1);
      const twin = plain.find((p) => p.upstreams[0] === server.upstreams[0])!;
      expect(server.locations).toEqual(twin.locations);
    }
    const published = [...tlsCompose.matchAll(/- "\$\{CAIRN_TLS_BIND_ADDRESS:-[^}]+\}:(\d+):(\d+)"/g)].map((m) => [
      m[1],
      m[2],
    ]);
    expect(published).toEqual(tls.map((t) => [t.listen.split(' ')[0], t.listen.split(' ')[0]]));
  });

  it('when the API runs in compose, then it does not migrate at start and migrations run as a one-shot job', () => {
    expect(compose).toMatch(/CAIRN_MIGRATE_ON_START: "false"/);
    expect(apiSpec.migrateOnStart.env).toBe('CAIRN_MIGRATE_ON_START');
    expect(compose).toMatch(/^ {2}migrate:\n(?: {4}.*\n)*? {4}command:\n {6}- migrate\n/m);
    expect(compose).not.toMatch(/condition: service_healthy/);
  });

  it('when a cluster has a collector, then the migrate job declares its credentials from the files the collector reads, and it runs only in the collectors profile', () => {
    const declared = [
      ...compose.matchAll(/- cluster=([a-z0-9-]+),user=([a-z0-9-]+),api_key_file=(\S+),password_file=(\S+)$/gm),
    ];
    expect(declared.map((m) => m[1])).toEqual(['east', 'west']);
    for (const [, cluster, user, keyFile, passwordFile] of declared) {
      const service = compose.slice(compose.indexOf(`\n  collector-${cluster}:\n`)).split(/\n {2}[a-z0-9-]+:\n/)[1]!;
      expect(service).toContain(`"--cluster", "${cluster}"`);
      expect(service).toContain(`CAIRN_API_KEY_FILE: ${keyFile}`);
      expect(service).toContain(`CAIRN_UTILIZATION_PASSWORD_FILE: ${passwordFile}`);
      expect(compose).toMatch(new RegExp(`CAIRN_UTILIZATION_USER: ${user}$`, 'm'));
    }
    expect(compose).toMatch(/^x-collector: &collector\n(?: {2}.*\n)*? {2}profiles:\n {4}- collectors\n/m);
  });

  it('when the region profile runs, then its gateway reads a streaming standby of the primary, writes to the primary, and keeps tokens in a Redis of its own', () => {
    const service = (name: string) => compose.slice(compose.indexOf(`\n  ${name}:\n`)).split(/\n {2}[a-z0-9-]+:\n/)[1]!;
    for (const name of ['postgres-standby', 'redis-region', 'gateway-region']) {
      expect(serviceNames).toContain(name);
      expect(service(name)).toMatch(/^ {4}profiles:\n {6}- region$/m);
    }
    // The secrets each URL file holds, as the secrets job writes them.
    const urlOf = (file: string) =>
      new RegExp(`^put ${file.replace(/[.]/g, '\\.')} "([^"]+)"$`, 'm').exec(secretsScript)?.[1];
    const fileOf = (env: string) =>
      new RegExp(`^ {6}${env}_FILE: /run/secrets/cairn/(\\S+)$`, 'm').exec(service('gateway-region'))?.[1];
    expect(urlOf(fileOf('DATABASE_URL')!)).toMatch(/^postgres:\/\/cairn_gateway:.*@postgres-standby:5432\/cairn$/);
    expect(urlOf(fileOf('CAIRN_PRIMARY_DATABASE_URL')!)).toMatch(
      /^postgres:\/\/cairn_gateway:.*@postgres:5432\/cairn$/,
    );
    expect(urlOf(fileOf('REDIS_URL')!)).toMatch(/@redis-region:6379\/0$/);
    expect(gatewaySpec.primaryDatabaseUrl.env).toBe('CAIRN_PRIMARY_DATABASE_URL');
    expect(service('gateway-region')).toMatch(new RegExp(`^ {6}${gatewaySpec.standbyStale.env}: refuse$`, 'm'));
    // The standby copies the primary as the role the primary's initdb script creates and allows.
    const replication = read('deploy/postgres/replication.sh');
    expect(service('postgres')).toContain(
      './deploy/postgres/replication.sh:/docker-entrypoint-initdb.d/replication.sh:ro',
    );
    expect(replication).toMatch(/CREATE ROLE cairn_replicator WITH REPLICATION LOGIN/);
    expect(replication).toMatch(
      /^echo "host replication cairn_replicator all scram-sha-256" >> "\$PGDATA\/pg_hba.conf"$/m,
    );
    expect(service('postgres-standby')).toMatch(
      /pg_basebackup -h postgres -U cairn_replicator -D "\$\$PGDATA" -R -X stream/,
    );
    expect(replication).toContain('/run/secrets/cairn/replication-password');
    expect(secretsScript).toMatch(/^put replication-password /m);
  });

  it('when an image is built, then it pins pnpm, runs as node under tini, and checks /healthz', () => {
    const pnpm = (JSON.parse(read('package.json')) as { packageManager: string }).packageManager;
    for (const service of ['management-api', 'auth-gateway']) {
      const dockerfile = read(`services/${service}/Dockerfile`);
      const final = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
      expect(dockerfile).toContain(`npm install -g ${pnpm}`);
      expect(dockerfile).toMatch(/^FROM node:22-bookworm-slim AS build$/m);
      expect(final).toMatch(/^FROM node:22-bookworm-slim$/m);
      // The image runs what `pnpm build` compiled, as the e2e tests' processes do.
      expect(dockerfile).toMatch(/&& pnpm build \\$/m);
      expect(final).toMatch(/^COPY --from=build \/out\/dist \.\/dist$/m);
      expect(final).toMatch(/^USER node$/m);
      expect(final).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "--"/m);
      expect(final).toMatch(/HEALTHCHECK[^\n]*\\\n[^\n]*\/healthz/);
      expect(final).not.toMatch(/tsx/);
    }
  });

  it('when the CLI image is built, then it pins pnpm, runs the built cairn as node under tini', () => {
    const pnpm = (JSON.parse(read('package.json')) as { packageManager: string }).packageManager;
    const dockerfile = read('packages/cli/Dockerfile');
    const final = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(dockerfile).toContain(`npm install -g ${pnpm}`);
    expect(dockerfile).toMatch(/&& pnpm build \\$/m);
    expect(final).toMatch(/^FROM node:22-bookworm-slim$/m);
    expect(final).toMatch(/^COPY --from=build \/out\/dist \.\/dist$/m);
    expect(final).toMatch(/^USER node$/m);
    expect(final).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "--", "node", "\/app\/bin\/cairn"\]$/m);
    expect(final).not.toMatch(/tsx/);
    expect(compose).toMatch(/dockerfile: packages\/cli\/Dockerfile/);
  });

  it('when an image is built, then it carries the OCI labels (version from a build arg, title, source, Apache-2.0) and the LICENSE', () => {
    expect(read('LICENSE')).toContain('Apache License\n                           Version 2.0, January 2004');
    for (const [file, title] of [
      ['services/management-api/Dockerfile', 'cairn-management-api'],
      ['services/auth-gateway/Dockerfile', 'cairn-auth-gateway'],
      ['packages/cli/Dockerfile', 'cairn-cli'],
    ] as const) {
      const final = read(file).slice(read(file).lastIndexOf('\nFROM '));
      expect(final).toMatch(/^ARG CAIRN_VERSION=0\.0\.0-dev$/m);
      expect(final).toContain('org.opencontainers.image.version="${CAIRN_VERSION}"');
      expect(final).toContain(`org.opencontainers.image.title="${title}"`);
      expect(final).toContain('org.opencontainers.image.source="${CAIRN_SOURCE}"');
      expect(final).toContain('org.opencontainers.image.revision="${CAIRN_REVISION}"');
      expect(final).toContain('org.opencontainers.image.licenses="Apache-2.0"');
      expect(final).toMatch(/^COPY --from=build \/src\/LICENSE \.\/LICENSE$/m);
    }
  });

  it('when the build context is sent, then local dependencies, data and secrets stay out of it', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim());
    for (const entry of ['**/node_modules', '**/data', '.git', '.env', 'bench/results', '**/dist'])
      expect(ignored).toContain(entry);
  });
});
