import { openApiDocument } from '../../src/openapi/document';
import { auditResource } from '../../src/routes/audit';
import { clustersResource } from '../../src/routes/clusters';
import { operatorsResource } from '../../src/routes/operators';
import { usersResource } from '../../src/routes/users';
import { validateOpenApi } from '../support/openapi-validator';

const discoverable = [auditResource, clustersResource, operatorsResource, usersResource];

describe('OpenAPI document', () => {
  it('when built from the resources, then a maintained OpenAPI 3.1 validator accepts it', async () => {
    const result = await validateOpenApi(openApiDocument(discoverable));
    expect(result).toEqual({ valid: true, version: '3.1', errors: null });
  });

  it('when a utilization range is read, then start is required and both bounds say how they are rounded', () => {
    const doc = openApiDocument(discoverable) as {
      paths: Record<
        string,
        Record<string, { parameters?: Array<{ name?: string; required?: boolean; description?: string }> }>
      >;
    };
    const ranged = Object.entries(doc.paths).filter(
      ([path, ops]) => path.includes('/utilization/') && ops.get?.parameters?.some((p) => p.name === 'start'),
    );
    expect(ranged.map(([path]) => path.replace(/^.*\/utilization\//, '')).sort()).toEqual([
      'storage/{policy}/',
      'storage/{policy}/{account}/detail/',
      'summary/',
      'transfer/{policy}/',
      'transfer/{policy}/{account}/detail/',
    ]);
    for (const [, ops] of ranged) {
      const byName = new Map(ops.get!.parameters!.map((p) => [p.name, p]));
      expect(byName.get('start')).toMatchObject({
        required: true,
        description: expect.stringMatching(/rounded down to the half hour/i),
      });
      expect(byName.get('end')).toMatchObject({
        required: false,
        description: expect.stringMatching(/rounded up to a whole number of hours/i),
      });
    }
  });

  it('when the summary is described, then policy_headers is declared with the values and default the route validates', () => {
    const doc = openApiDocument(discoverable) as {
      paths: Record<string, Record<string, { parameters: Array<{ name?: string; schema?: unknown }> }>>;
    };
    const summary = doc.paths['/api/v1/clusters/{id}/utilization/summary/']!.get!;
    expect(summary.parameters.find((p) => p.name === 'policy_headers')).toMatchObject({
      in: 'query',
      required: false,
      schema: { type: 'string', enum: ['index', 'name'], default: 'index' },
    });
  });

  it('when the document is broken, then the validator refuses it (it can fail)', async () => {
    const doc = openApiDocument(discoverable) as {
      paths: Record<string, Record<string, { parameters: Array<Record<string, unknown>> }>>;
    };
    // Swagger 2's body parameter is not OpenAPI 3.
    doc.paths['/api/v1/users/']!.get!.parameters.push({ name: 'user', in: 'body', schema: { type: 'string' } });
    expect((await validateOpenApi(doc)).valid).toBe(false);
    const dangling = openApiDocument(discoverable) as { components: { schemas: Record<string, unknown> } };
    delete dangling.components.schemas.Error;
    expect((await validateOpenApi(dangling)).valid).toBe(false);
  });
});
