import { execFile } from 'node:child_process';
import path from 'node:path';

/**
 * Validates an OpenAPI document with @seriousme/openapi-schema-validator (the OpenAPI Initiative's
 * JSON schemas, plus every $ref resolved). The package is ESM-only and jest here runs CommonJS, so
 * it runs in a plain node child that reads the document on stdin.
 */
const SCRIPT = `
import { Validator } from '@seriousme/openapi-schema-validator';
let text = '';
for await (const chunk of process.stdin) text += chunk;
const validator = new Validator();
const result = await validator.validate(JSON.parse(text));
if (result.valid) {
  try { validator.resolveRefs(); } catch (e) { result.valid = false; result.errors = String(e); }
}
process.stdout.write(JSON.stringify({ valid: result.valid, version: validator.version, errors: result.errors ?? null }));
`;

export interface OpenApiValidation {
  valid: boolean;
  version: string;
  errors: unknown;
}

export function validateOpenApi(doc: unknown): Promise<OpenApiValidation> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ['--input-type=module', '-e', SCRIPT],
      { cwd: path.join(__dirname, '..', '..'), maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`validator failed: ${stderr || err.message}`));
        resolve(JSON.parse(stdout) as OpenApiValidation);
      },
    );
    child.stdin!.end(JSON.stringify(doc));
  });
}
