import { compileCheck } from '@cairn/domain';
import { storageSchema, transferRecordSchema, transferSchema } from '../../src/services/utilization-record';

/**
 * The collectors' writes are checked by the thousand: a transfer batch checks up to 20,000 records
 * one by one (after its envelope), a storage write up to 20,000 samples of a dozen fields each, and
 * joi's walk of them was most of the API's time for either. These schemas must stay ones that compile
 * (compiled-check.ts): a rule JSON Schema cannot say exactly would quietly put them back on joi's walk.
 */
describe('collector write schemas', () => {
  it('when the transfer record schema is prepared for validation, then it is compiled, and answers a full record as joi does', () => {
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

  it('when the storage schema is prepared for validation, then it is compiled, and answers a round’s write as joi does', () => {
    const check = compileCheck(storageSchema);
    expect(check).not.toBeNull();
    const body = {
      sampled_at: '2026-11-28T05:10:00Z',
      samples: [
        { account: 'AUTH_a', bytes_used: 9, object_count: 3, container_count: 2 },
        {
          account: 'AUTH_b',
          bytes_used: 5,
          object_count: 2,
          container_count: 1,
          policies: [
            { index: 0, bytes_used: 4, object_count: 1, container_count: 1 },
            { name: 'silver', bytes_used: 1, object_count: 1, container_count: 0 },
          ],
        },
      ],
    };
    expect(check!(body)?.value).toStrictEqual(storageSchema.validate(body).value);
    const both = { index: 0, name: 'gold', bytes_used: 1, object_count: 1, container_count: 1 };
    expect(check!({ ...body, samples: [{ ...body.samples[0], policies: [both] }] })).toBeNull();
  });

  it('when the transfer batch’s envelope is prepared for validation, then it is compiled, records left as sent', () => {
    const check = compileCheck(transferSchema);
    expect(check).not.toBeNull();
    const record = { account: 'AUTH_a', anything: [1] };
    const body = { batch_id: 'b-00000001', covered: { start: 'x', end: 'y' }, records: [record, 5] };
    const value = check!(body)?.value as { records: unknown[] };
    expect(value).toStrictEqual(transferSchema.validate(body).value);
    expect(value.records[0]).toBe(record);
    expect(check!({ ...body, covered: { start: 'x' } })).toBeNull();
  });
});
