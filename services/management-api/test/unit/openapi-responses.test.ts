import { openApiDocument } from '../../src/openapi/document';
import { auditResource } from '../../src/routes/audit';
import { clustersResource } from '../../src/routes/clusters';
import { operatorsResource } from '../../src/routes/operators';
import { usersResource } from '../../src/routes/users';
import { ResponseChecker } from '../support/openapi-responses';

/** The integration tests' response checks must be able to fail; these answers are made up. */
const checker = new ResponseChecker(
  openApiDocument([auditResource, clustersResource, operatorsResource, usersResource]) as Record<string, unknown>,
);
const JSON_TYPE = { 'content-type': 'application/json' };
const answer = (status: number, body: unknown, headers: Record<string, string> = JSON_TYPE) =>
  ({ status, headers, text: body === undefined ? '' : JSON.stringify(body) }) as never;
const cluster = {
  auth_url: 'http://a/auth',
  default_quota_bytes: null,
  default_quota_bytes_policy: null,
  default_quota_count: null,
  default_quota_count_policy: null,
  quota_bytes_total: null,
  quota_bytes_policy_total: null,
  quota_support: null,
  health: 'unknown',
  id: 1,
  name: 'default',
  region: 'RegionOne',
  resource_uri: '/api/v1/clusters/1/',
  storage_url: 'http://a/v1',
  uuid: '00000000-0000-4000-8000-000000000000',
};
const URL = 'http://127.0.0.1:1';

describe('OpenAPI response checks', () => {
  it('when an answer matches the document, then no problem', () => {
    expect(checker.problem('GET', `${URL}/api/v1/clusters/1/`, answer(200, cluster))).toBeNull();
    expect(checker.problem('GET', `${URL}/api/v1/clusters/1`, answer(200, cluster))).toBeNull();
    expect(
      checker.problem(
        'GET',
        `${URL}/api/v1/clusters/?limit=1`,
        answer(200, { meta: { limit: 1, next: null, offset: 0, previous: null, total_count: 1 }, objects: [cluster] }),
      ),
    ).toBeNull();
    expect(checker.problem('DELETE', `${URL}/api/v1/users/5/`, answer(204, undefined, {}))).toBeNull();
    expect(
      checker.problem(
        'PUT',
        `${URL}/api/v1/users/`,
        answer(
          405,
          { error: 'Method not allowed. Allowed: GET,POST,PATCH' },
          { ...JSON_TYPE, allow: 'GET,POST,PATCH' },
        ),
      ),
    ).toBeNull();
    expect(checker.problem('GET', `${URL}/made/up/`, answer(404, { anything: 1 }))).toBeNull();
  });

  it('when a field has the wrong type, is missing or is extra, then the answer is refused', () => {
    expect(checker.problem('GET', `${URL}/api/v1/clusters/1/`, answer(200, { ...cluster, region: 5 }))).toMatch(
      /region must be string/,
    );
    const { uuid: _uuid, ...noUuid } = cluster;
    expect(checker.problem('GET', `${URL}/api/v1/clusters/1/`, answer(200, noUuid))).toMatch(
      /must have required property 'uuid'/,
    );
    expect(checker.problem('GET', `${URL}/api/v1/clusters/1/`, answer(200, { ...cluster, colour: 'red' }))).toMatch(
      /additional properties/,
    );
  });

  it('when a status, header, media type or Allow is not documented, then the answer is refused', () => {
    expect(checker.problem('GET', `${URL}/api/v1/clusters/1/`, answer(202, cluster))).toMatch(
      /answered 202, which the document does not list/,
    );
    expect(checker.problem('POST', `${URL}/api/v1/clusters/`, answer(201, cluster))).toMatch(
      /without the documented Location header/,
    );
    expect(
      checker.problem('GET', `${URL}/api/v1/clusters/1/`, answer(200, cluster, { 'content-type': 'text/html' })),
    ).toMatch(/as text\/html/);
    expect(
      checker.problem(
        'PUT',
        `${URL}/api/v1/users/`,
        answer(405, { error: 'x' }, { ...JSON_TYPE, allow: 'GET,POST,PUT' }),
      ),
    ).toMatch(/Allow is/);
    expect(checker.problem('PUT', `${URL}/api/v1/users/`, answer(200, { error: 'x' }))).toMatch(/has no PUT here/);
    expect(checker.problem('GET', `${URL}/api/v1/users/1/`, answer(404, { message: 'x' }))).toMatch(/does not allow/);
  });
});
