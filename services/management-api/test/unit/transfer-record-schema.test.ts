import { compileCheck } from '@cairn/domain';
import { transferRecordSchema } from '../../src/services/utilization-record';

/**
 * A transfer batch checks up to 20,000 records one by one; joi's walk of a record's 21 fields was
 * most of the ingest's API time. The record schema must stay one that compiles (compiled-check.ts):
 * a rule JSON Schema cannot say exactly would quietly put the ingest back on joi's walk.
 */
describe('transfer record schema', () => {
  it('when it is prepared for validation, then it is compiled, and answers a full record as joi does', () => {
    const check = compileCheck(transferRecordSchema);
    expect(check).not.toBeNull();
    const record = {
      account: 'AUTH_a',
      hour: '2026-11-28T05:00:00Z',
      bytes_in: 5,
      bytes_out: 7,
      req_count: 2,
      req_get: 1,
    };
    expect(check!(record)?.value).toEqual(transferRecordSchema.validate(record).value);
    expect(check!({ ...record, req_get: -1 })).toBeNull();
  });
});
