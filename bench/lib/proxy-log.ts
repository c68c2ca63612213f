import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

/**
 * A day of Swift proxy access lines for the ingest benchmark, in the template the parser documents
 * (access-log.ts: the default `log_msg_template` followed by ` {account}`), each behind an rsyslog
 * prefix as the file on a proxy holds them, and built field by field like the lines of
 * packages/cli/test/access-log-classes.test.ts: URL-quoted fields, the path quoted twice, '-' for
 * an empty field, middleware subrequests with their `swift.source`.
 *
 * The mix (of client requests; deterministic, from a fixed seed): Swift object GETs, HEADs, PUTs,
 * POSTs, DELETEs, container and account listings, COPYs (each logged with the copy middleware's
 * read of its source before it, as Swift does), SLO downloads (the manifest GET plus a segment
 * GET logged with source SLO); about 15 % through s3api (S3 paths, the account only in
 * `{account}`); about 5 % errors (404, 401, 413, 499, 503); a fifth from 10.0.0.0/8, the
 * provider's own networks.
 */
export interface ProxyLogOptions {
  file: string;
  lines: number;
  /** The account of request i is AUTH_<prefix><7 digits>, one of `accounts`. */
  accounts: number;
  accountName: (i: number) => string;
  /** Start times run evenly from here over 24 hours. */
  dayStartMs: number;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number) => String(n).padStart(2, '0');

/** Writes the file; returns how many lines it holds (exactly `lines`). */
export async function writeProxyLog(o: ProxyLogOptions): Promise<number> {
  const out = createWriteStream(o.file);
  // xorshift32: the same file for the same settings, run after run.
  let seed = 0x9e3779b9;
  const rand = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 0x1_0000_0000;
  };
  const step = 86_400_000 / o.lines;
  let written = 0;
  let chunk: string[] = [];
  const emit = async (l: string) => {
    // A request logged as two lines (a COPY, an SLO read) may be cut at the end: exactly `lines`.
    if (written >= o.lines) return;
    chunk.push(l);
    written++;
    if (chunk.length >= 5000) {
      if (!out.write(`${chunk.join('\n')}\n`)) await once(out, 'drain');
      chunk = [];
    }
  };
  while (written < o.lines) {
    const ms = o.dayStartMs + written * step;
    const d = new Date(ms);
    const prefix = `${MONTHS[d.getUTCMonth()]} ${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} proxy${(written % 4) + 1} proxy-server:`;
    const logTime = `${pad(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}/${pad(d.getUTCHours())}/${pad(d.getUTCMinutes())}/${pad(d.getUTCSeconds())}`;
    const start = (ms / 1000).toFixed(9);
    const end = ((ms + 12) / 1000).toFixed(9);
    const a = Math.floor(rand() * o.accounts);
    const account = o.accountName(a);
    const internal = rand() < 0.2;
    const peer = internal ? `10.${a % 250}.${(a >> 8) % 250}.${(a % 200) + 2}` : `203.0.113.${(a % 250) + 1}`;
    const txn = `tx${written.toString(16).padStart(21, '0')}-00${(Math.floor(ms / 1000) >>> 0).toString(16)}`;
    const r = rand();
    const size = Math.floor(rand() * 4_000_000);
    const err = rand();
    const status = (ok: number) => (err < 0.025 ? 404 : err < 0.035 ? 401 : err < 0.04 ? 499 : err < 0.045 ? 503 : ok);
    const line = (f: {
      method: string;
      path: string;
      status: number;
      recvd?: number;
      sent?: number;
      source?: string;
      policy?: string;
      s3?: boolean;
      agent?: string;
    }) =>
      `${prefix} ${peer} ${peer} ${logTime} ${f.method} ${f.path} HTTP/1.1 ${f.status} - ${f.agent ?? (f.s3 ? 'aws-cli/2.9.19%20Python/3.11' : 'python-swiftclient-4.4.0')} ${f.s3 ? '-' : 'gAAAAAtok...'} ${f.recvd ?? '-'} ${f.sent ?? '-'} - ${txn} - 0.0123 ${f.source ?? '-'} - ${start} ${end} ${f.policy ?? a % 2} ${account}`;
    const obj = `/v1/${account}/c${a % 7}/photos/img%2520${written % 1000}.jpg`;
    const bucket = `/bucket${a % 5}`;
    if (r < 0.85) {
      // Swift API
      const q = r / 0.85;
      if (q < 0.36) {
        const s = status(200);
        await emit(line({ method: 'GET', path: obj, status: s, sent: s === 200 ? size : s === 499 ? size >> 1 : 70 }));
      } else if (q < 0.48) await emit(line({ method: 'HEAD', path: obj, status: status(200) }));
      else if (q < 0.62) {
        const s = err < 0.045 ? status(201) : rand() < 0.01 ? 413 : 201;
        await emit(
          line({
            method: 'PUT',
            path: obj,
            status: s,
            recvd: s === 201 ? size : 4096,
            sent: s === 201 ? undefined : 50,
          }),
        );
      } else if (q < 0.72)
        await emit(
          line({
            method: 'GET',
            path: `/v1/${account}/c${a % 7}%3Fformat%3Djson%26limit%3D1000`,
            status: status(200),
            sent: 2400,
            policy: '-',
          }),
        );
      else if (q < 0.74)
        await emit(
          line({ method: 'GET', path: `/v1/${account}%3Fformat%3Djson`, status: status(200), sent: 380, policy: '-' }),
        );
      else if (q < 0.77) await emit(line({ method: 'POST', path: obj, status: status(202), recvd: 0 }));
      else if (q < 0.83) await emit(line({ method: 'DELETE', path: obj, status: status(204) }));
      else if (q < 0.85) {
        // The copy middleware's read of the source, then the client's COPY carrying its source.
        await emit(
          line({ method: 'GET', path: `/v1/${account}/c${a % 7}/src`, status: 200, sent: size, source: 'SSC' }),
        );
        await emit(line({ method: 'COPY', path: obj, status: 201, source: 'SSC' }));
      } else if (q < 0.92) {
        // An SLO download: the manifest GET the client made, then a segment the middleware fetched.
        await emit(line({ method: 'GET', path: `${obj}.slo`, status: 200, sent: size * 3 }));
        await emit(
          line({
            method: 'GET',
            path: `/v1/${account}/segments/img${written % 1000}/1`,
            status: 200,
            sent: size,
            source: 'SLO',
          }),
        );
      } else await emit(line({ method: 'GET', path: obj, status: status(200), sent: size }));
    } else {
      // s3api: an S3 path, the account only in {account}.
      const q = (r - 0.85) / 0.15;
      const key = `${bucket}/dir/key${written % 1000}.bin`;
      if (q < 0.4) await emit(line({ method: 'GET', path: key, status: status(200), sent: size, s3: true }));
      else if (q < 0.6) await emit(line({ method: 'PUT', path: key, status: status(200), recvd: size, s3: true }));
      else if (q < 0.75)
        await emit(
          line({
            method: 'GET',
            path: `${bucket}%3Flist-type%3D2`,
            status: status(200),
            sent: 5200,
            policy: '-',
            s3: true,
          }),
        );
      else if (q < 0.9) await emit(line({ method: 'HEAD', path: key, status: status(200), s3: true }));
      else await emit(line({ method: 'DELETE', path: key, status: status(204), s3: true }));
    }
  }
  if (chunk.length) out.write(`${chunk.join('\n')}\n`);
  out.end();
  await once(out, 'finish');
  return o.lines;
}
