import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/processes';
import { clustersResource } from '../../services/management-api/src/routes/clusters';
import { usersResource } from '../../services/management-api/src/routes/users';

/**
 * Scripts written against the tastypie API compare users and clusters; the page for them must name
 * every field Cairn's users and clusters have, the ones tastypie had and the ones Cairn added, so a
 * field added later cannot go unexplained.
 */
describe('docs/tastypie-compatibility.md', () => {
  const doc = readFileSync(join(REPO_ROOT, 'docs', 'tastypie-compatibility.md'), 'utf8');

  it.each([
    ['users', usersResource],
    ['clusters', clustersResource],
  ])('when a field of %s is defined, then the page names it', (_name, resource) => {
    const unnamed = Object.keys(resource.fields).filter((field) => !doc.includes(`\`${field}\``));
    expect(unnamed).toEqual([]);
  });
});
