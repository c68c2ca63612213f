import { AUDIT_ACTIONS } from '@cairn/contract';
import { ACTIONS, COLLECTOR_ACTION } from '../../src/lib/audit-actions';

describe("the audit page's actions", () => {
  it('when the console lists audit actions, then they are exactly the ones the API records', () => {
    expect([...ACTIONS].sort()).toEqual([...AUDIT_ACTIONS].sort());
    expect(ACTIONS).toContain(COLLECTOR_ACTION);
  });
});
