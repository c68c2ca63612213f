import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { Knex } from 'knex';
import {
  errors,
  formatUtc,
  parseTimeRange,
  TRANSFER_DETAIL_FIELD_NAMES,
  validate,
  type TimeRange,
  type UtilizationRetention,
} from '@cairn/domain';
import { operatorOf } from '../http/auth';
import { parseBody } from '../http/body';
import { streamCsv, wantsCsv } from '../http/csv';
import { parseLimit, parseListQuery, parseOffset, queryPairs, type QueryParams } from '../http/filters';
import { buildMeta } from '../http/pagination';
import { DEFAULT_LIMIT, MAX_LIMIT, type ResourceDef } from '../http/resource';
import { formatOf, send } from '../http/respond';
import { resourceRoute } from '../http/routing';
import { API_ROOT, parseIntId } from '../resources/uris';
import { recordJson, recordJsonText } from '../resources/utilization-records';
import {
  POLICY_SUMMARY_FIELDS,
  SUMMARY_FIELDS,
  policyColumnPrefix,
  policyHeadersSchema,
  type PolicyHeaders,
  type PolicySummaryFieldName,
  type SummaryFieldName,
} from '../resources/utilization-summary';
import type { UtilizationKind } from '../services/utilization';
import * as utilization from '../services/utilization';
import { recordStorage, recordTransfer, writeWindow } from '../services/utilization-record';
import { summaryExport, summaryPage } from '../services/utilization-summary';
import { actingOf } from '../http/acting';
import { sendList } from './list';

/** Only `account` filters (exact, startswith, gt for reading by key); everything else is ignored, as tastypie does. */
export const utilizationResource: ResourceDef = {
  name: 'utilization',
  alias: 'u',
  listMethods: ['GET'],
  detailMethods: ['GET'],
  fields: {
    account: {
      type: 'string',
      help: 'Swift account, AUTH_<user>.',
      column: 'account',
      filtering: ['exact', 'startswith', 'gt'],
    },
  },
};

/** A cluster's storage policies: paged by index; no filters, no ordering. */
export const policiesResource: ResourceDef = {
  name: 'policies',
  alias: 'p',
  listMethods: ['GET'],
  detailMethods: [],
  fields: {
    index: { type: 'integer', help: 'Storage policy index, as in swift.conf.' },
    name: { type: 'string', help: 'Storage policy name, as in X-Account-Storage-Policy-<name>-* headers.' },
    default: { type: 'boolean', help: "Whether it is the cluster's default policy." },
  },
};

/** Offsets past 2^53 are past any table's end; SQL takes a number. */
const safeOffset = (offset: bigint): number =>
  offset > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(offset);

/** Collector writes carry a round of samples: larger than the API's usual 64 kB bodies. */
export const UTILIZATION_WRITE_LIMIT = '16mb';

const KINDS: readonly UtilizationKind[] = ['storage', 'transfer'];

function policyOf(raw: string | undefined): utilization.PolicySelector {
  if (raw === 'total') return 'total';
  if (raw && /^\d{1,5}$/.test(raw) && Number(raw) <= 32767) return Number(raw);
  throw errors.notFound(
    `No storage policy '${String(raw).replace(/[<>&"']/g, '')}': use a policy index (0, 1, ...) or 'total'.`,
  );
}

const last = (params: QueryParams, key: string): string | undefined => params.filter(([k]) => k === key).pop()?.[1];

const rangeMeta = (range: TimeRange) => ({ start: formatUtc(range.start), end: formatUtc(range.end) });

const storageColumns = ['start', 'end', 'bytes_used', 'object_count', 'container_count', 'pct_complete'] as const;
const transferColumns = [
  'start',
  'end',
  'bytes_in',
  'bytes_out',
  'req_count',
  ...TRANSFER_DETAIL_FIELD_NAMES,
  'pct_complete',
] as const;
/**
 * The summary's CSV: the range after the account, then the declared fields, then each policy's as
 * <prefix>_<field>, the prefix `p<index>` or the policy's name (`policy_headers`).
 */
const summaryFigures = (Object.keys(SUMMARY_FIELDS) as SummaryFieldName[]).filter((f) => f !== 'account');
const policyFigures = (Object.keys(POLICY_SUMMARY_FIELDS) as PolicySummaryFieldName[]).filter(
  (f) => f !== 'policy_index',
);
const summaryColumns = ['account', 'start', 'end', ...summaryFigures];

/**
 * `exportBatch`: accounts a CSV export reads per query (and holds at once). Tests pass a small one
 * to cross batch boundaries with a few accounts.
 */
export function utilizationRouter(
  db: Knex,
  auth: RequestHandler,
  retention: UtilizationRetention,
  now: () => Date = () => new Date(),
  exportBatch = 5000,
): Router {
  const router = Router();
  const settings: utilization.UtilizationSettings = { retention, now };

  /**
   * The request's cluster (404 unless visible), range, account filters and paging. Hourly records
   * go back the hourly retention; the summary, read from daily rollups, the daily one.
   */
  async function readRequest(req: Request<Record<string, string>>, res: Response, oldestDays = retention.hourlyDays) {
    const op = operatorOf(res);
    const raw = req.params.id ?? '';
    const cluster = await utilization.visibleCluster(db, op, parseIntId(raw), raw);
    const params = queryPairs(req.originalUrl);
    const range = parseTimeRange(last(params, 'start'), last(params, 'end'), now(), oldestDays);
    const { filters } = parseListQuery(utilizationResource, params, DEFAULT_LIMIT, MAX_LIMIT);
    const limit = parseLimit(last(params, 'limit'), DEFAULT_LIMIT, MAX_LIMIT);
    const offset = safeOffset(parseOffset(last(params, 'offset')));
    // An export is whole unless the client pages it explicitly.
    const paged = last(params, 'limit') !== undefined || last(params, 'offset') !== undefined;
    return { op, cluster, params, range, filters, limit, offset, paged };
  }

  for (const kind of KINDS) {
    resourceRoute(router, `/clusters/:id/utilization/${kind}/:policy/`, auth, {
      GET: async (req, res) => {
        const policy = policyOf(req.params.policy);
        const r = await readRequest(req, res);
        if (wantsCsv(req)) {
          const batches = r.paged
            ? (async function* () {
                yield (
                  await utilization.listAccounts(db, r.cluster, kind, policy, r.range, r.filters, r.limit, r.offset)
                ).accounts.map((a) => [a]);
              })()
            : mapBatches(
                utilization.exportAccounts(db, r.cluster, kind, policy, r.range, r.filters, exportBatch),
                (a) => [a],
              );
          return streamCsv(res, `${kind}-${r.cluster.id}-accounts.csv`, ['account'], batches);
        }
        const page = await utilization.listAccounts(db, r.cluster, kind, policy, r.range, r.filters, r.limit, r.offset);
        const path = `${API_ROOT}/clusters/${r.cluster.id}/utilization/${kind}/${req.params.policy}/`;
        send(req, res, 200, {
          meta: {
            ...buildMeta(path, r.params, r.limit, BigInt(r.offset), page.total),
            ...rangeMeta(r.range),
            policy_index: policy,
          },
          objects: page.accounts.map((account) => ({ account })),
        });
      },
    });

    const columns = kind === 'storage' ? storageColumns : transferColumns;
    const sortedColumns = [...columns].sort();
    resourceRoute(router, `/clusters/:id/utilization/${kind}/:policy/:account/detail/`, auth, {
      GET: async (req, res) => {
        const policy = policyOf(req.params.policy);
        const account = req.params.account ?? '';
        const r = await readRequest(req, res);
        const detail = async (first: number, count: number): Promise<Array<Record<string, unknown>> | null> =>
          (kind === 'storage'
            ? await utilization.storageDetail(db, r.cluster, policy, account, r.range, first, count)
            : await utilization.transferDetail(db, r.cluster, policy, account, r.range, first, count)) as Array<
            Record<string, unknown>
          > | null;
        if (wantsCsv(req)) {
          const first = r.paged ? r.offset : 0;
          const end = r.paged ? Math.min(r.range.hours, r.offset + r.limit) : r.range.hours;
          async function* batches() {
            for (let at = first; at < end; at += 744) {
              // An account never seen has no rows at all.
              const records = await detail(at, Math.min(744, end - at));
              if (!records) return;
              yield records.map((rec) =>
                columns.map((c) => (rec[c] instanceof Date ? formatUtc(rec[c] as Date) : rec[c])),
              );
            }
          }
          return streamCsv(res, `${kind}-${r.cluster.id}-${account}.csv`, columns, batches());
        }
        const records = await detail(r.offset, r.limit);
        const json = formatOf(req) === 'json';
        const path = `${API_ROOT}/clusters/${r.cluster.id}/utilization/${kind}/${req.params.policy}/${encodeURIComponent(account)}/detail/`;
        // An account never seen: total_count 0 and no objects, not a 404.
        send(req, res, 200, {
          meta: {
            ...buildMeta(path, r.params, r.limit, BigInt(r.offset), records ? r.range.hours : 0),
            ...rangeMeta(r.range),
            account,
            policy_index: policy,
          },
          // XML needs the objects; JSON takes each record's text as it is.
          objects: (records ?? []).map((rec): unknown =>
            json ? recordJsonText(rec, sortedColumns) : recordJson(rec, sortedColumns),
          ),
        });
      },
    });
  }

  resourceRoute(router, '/clusters/:id/utilization/summary/', auth, {
    GET: async (req, res) => {
      const r = await readRequest(req, res, retention.dailyDays);
      // Checked whatever the format, so that a mistyped value is never silently ignored.
      const headers = validate<PolicyHeaders>(policyHeadersSchema, last(r.params, 'policy_headers'));
      if (wantsCsv(req)) {
        const exported = r.paged
          ? await (async () => {
              const page = await summaryPage(db, r.cluster, r.range, r.filters, r.limit, r.offset);
              return {
                policies: page.policies,
                policyNames: page.policyNames,
                batches: (async function* () {
                  yield page.rows;
                })(),
              };
            })()
          : await summaryExport(db, r.cluster, r.range, r.filters, exportBatch);
        const policyColumns = exported.policies.flatMap((p) => {
          const prefix = policyColumnPrefix(p, exported.policyNames.get(p), headers);
          return policyFigures.map((f) => `${prefix}_${f}`);
        });
        const times = rangeMeta(r.range);
        return streamCsv(
          res,
          `summary-${r.cluster.id}.csv`,
          [...summaryColumns, ...policyColumns],
          mapBatches(exported.batches, (s) => {
            const row: unknown[] = [s.account, times.start, times.end];
            for (const f of summaryFigures) row.push(s[f]);
            for (const p of s.policies) for (const f of policyFigures) row.push(p[f]);
            return row;
          }),
        );
      }
      const page = await summaryPage(db, r.cluster, r.range, r.filters, r.limit, r.offset);
      send(req, res, 200, {
        meta: {
          ...buildMeta(
            `${API_ROOT}/clusters/${r.cluster.id}/utilization/summary/`,
            r.params,
            r.limit,
            BigInt(r.offset),
            page.total,
          ),
          ...rangeMeta(r.range),
        },
        objects: page.rows,
      });
    },
  });

  // What the storage collector HEADs: every account ever created, deleted users' included.
  resourceRoute(router, '/clusters/:id/utilization/accounts/', auth, {
    GET: async (req, res) => {
      const op = operatorOf(res);
      const raw = req.params.id ?? '';
      const cluster = await utilization.visibleCluster(db, op, parseIntId(raw), raw);
      const params = queryPairs(req.originalUrl);
      const { filters, limit, offset } = parseListQuery(utilizationResource, params, DEFAULT_LIMIT, MAX_LIMIT);
      const page = await utilization.knownAccountsPage(db, cluster, filters, limit, safeOffset(offset));
      send(req, res, 200, {
        meta: buildMeta(`${API_ROOT}/clusters/${cluster.id}/utilization/accounts/`, params, limit, offset, page.total),
        objects: page.accounts.map((account) => ({ account })),
      });
    },
  });

  // What a collector may write now: ingest-logs skips (and reports) log lines outside it.
  resourceRoute(router, '/clusters/:id/utilization/window/', auth, {
    GET: async (req, res) => {
      const raw = req.params.id ?? '';
      await utilization.visibleCluster(db, operatorOf(res), parseIntId(raw), raw);
      const { oldest, latest } = writeWindow(settings);
      send(req, res, 200, { oldest: oldest.toISOString(), latest: latest.toISOString() });
    },
  });

  // The names Swift puts in X-Account-Storage-Policy-<name>-* headers, with their indexes.
  resourceRoute(router, '/clusters/:id/utilization/policies/', auth, {
    GET: async (req, res) => {
      const raw = req.params.id ?? '';
      const cluster = await utilization.visibleCluster(db, operatorOf(res), parseIntId(raw), raw);
      await sendList(
        req,
        res,
        policiesResource,
        `${API_ROOT}/clusters/${cluster.id}/utilization/policies/`,
        (q) => utilization.clusterPolicies(db, cluster, q),
        (p) => ({
          default: p.isDefault,
          index: p.index,
          name: p.name,
        }),
      );
    },
  });

  for (const kind of KINDS) {
    resourceRoute(router, `/clusters/:id/utilization/${kind}/`, auth, {
      POST: async (req, res) => {
        const op = operatorOf(res);
        const raw = req.params.id ?? '';
        const cluster = await utilization.visibleCluster(db, op, parseIntId(raw), raw);
        const acting = actingOf(req, res);
        // Read by the service once the operator may write: a reader gets 403 whatever it sends.
        const bodyOf = () => parseBody(req, undefined, UTILIZATION_WRITE_LIMIT);
        const result =
          kind === 'storage'
            ? await recordStorage(db, acting, cluster, bodyOf, settings)
            : await recordTransfer(db, acting, cluster, bodyOf, settings);
        send(req, res, 200, result);
      },
    });
  }

  return router;
}

async function* mapBatches<T>(batches: AsyncIterable<T[]>, row: (item: T) => unknown[]): AsyncGenerator<unknown[][]> {
  for await (const batch of batches) yield batch.map(row);
}
