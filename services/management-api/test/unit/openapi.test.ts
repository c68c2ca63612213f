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

  it('when the document is broken, then the validator refuses it (it can fail)', async () => {
    const doc = openApiDocument(discoverable) as { paths: Record<string, Record<string, { parameters: Array<Record<string, unknown>> }>> };
    // Swagger 2's body parameter is not OpenAPI 3.
    doc.paths['/api/v1/users/']!.get!.parameters.push({ name: 'user', in: 'body', schema: { type: 'string' } });
    expect((await validateOpenApi(doc)).valid).toBe(false);
    const dangling = openApiDocument(discoverable) as { components: { schemas: Record<string, unknown> } };
    delete dangling.components.schemas.Error;
    expect((await validateOpenApi(dangling)).valid).toBe(false);
  });
});
