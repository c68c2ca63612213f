import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type request from 'supertest';

type Response = request.Response;

/**
 * Checks answers against the OpenAPI document the app serves: the status must be documented for
 * the path and method, required headers present, the media type documented, and a JSON body valid
 * against the documented schema (JSON Schema 2020-12, compiled once per schema). Paths the document
 * does not have (404s for made-up URLs) are not checked; a method a path does not take must be a
 * 405 whose `Allow` lists exactly the documented methods.
 */

type Json = Record<string, unknown>;
const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

interface Route {
  path: string;
  pattern: RegExp;
  templates: number;
  item: Json;
}

const pointer = (parts: string[]): string =>
  '#/' + parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export class ResponseChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly routes: Route[];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly doc: Json) {
    addFormats(this.ajv);
    this.ajv.addSchema({ ...doc, $id: 'openapi' });
    this.routes = Object.entries(doc.paths as Record<string, Json>)
      .map(([path, item]) => ({
        path,
        item,
        templates: (path.match(/\{/g) ?? []).length,
        // Routing is not strict: the trailing slash is optional.
        pattern: new RegExp(
          `^${path
            .replace(/\/$/, '')
            .replace(/[.]/g, '\\.')
            .replace(/\{\w+\}/g, '[^/]+')}/?$`,
        ),
      }))
      // A concrete path (`/users/schema/`) wins over a template (`/users/{id}/`), as in OpenAPI.
      .sort((a, b) => a.templates - b.templates);
  }

  private resolve(value: Json): Json {
    const ref = value.$ref;
    if (typeof ref !== 'string') return value;
    let node: unknown = this.doc;
    for (const part of ref.slice(2).split('/')) node = (node as Json)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    if (!node) throw new Error(`unresolved ${ref}`);
    return this.resolve(node as Json);
  }

  private validator(parts: string[]): ValidateFunction {
    const key = pointer(parts);
    let fn = this.compiled.get(key);
    if (!fn) {
      fn = this.ajv.compile({ $ref: `openapi${key}` });
      this.compiled.set(key, fn);
    }
    return fn;
  }

  /** What is wrong with this answer, or null. */
  problem(method: string, url: string, res: Response): string | null {
    const pathname = new URL(url).pathname;
    const route = this.routes.find((r) => r.pattern.test(pathname));
    if (!route) return null;
    const verb = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
    const where = `${method} ${pathname} (${route.path})`;
    const documented = METHODS.filter((m) => route.item[m]).map((m) => m.toUpperCase());
    const allowMatches = () => {
      const allow = String(res.headers.allow ?? '')
        .split(',')
        .filter(Boolean)
        .sort();
      return allow.join(',') === [...documented].sort().join(',')
        ? null
        : `${where}: Allow is '${res.headers.allow}', the document says ${documented.join(',')}`;
    };

    let responsePath: string[];
    if (route.item[verb]) {
      const responses = (route.item[verb] as Json).responses as Json;
      if (!responses[String(res.status)]) {
        return `${where} answered ${res.status}, which the document does not list (it lists ${Object.keys(responses).join(', ')}): ${res.text?.slice(0, 300)}`;
      }
      responsePath = ['paths', route.path, verb, 'responses', String(res.status)];
    } else if (res.status === 404) {
      return null; // outside /api/v1/, an unknown method is an unknown path
    } else if (res.status === 405) {
      responsePath = ['components', 'responses', 'MethodNotAllowed'];
    } else {
      return `${where}: the document has no ${verb.toUpperCase()} here, but it answered ${res.status}`;
    }
    if (res.status === 405 || verb === 'options') {
      const wrongAllow = allowMatches();
      if (wrongAllow) return wrongAllow;
    }

    let node: unknown = this.doc;
    for (const part of responsePath) node = (node as Json)[part];
    const response = this.resolve(node as Json);
    if (response !== node && typeof (node as Json).$ref === 'string') {
      responsePath = (node as { $ref: string }).$ref
        .slice(2)
        .split('/')
        .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    }
    for (const [name, h] of Object.entries((response.headers ?? {}) as Record<string, Json>)) {
      if (h.required && res.headers[name.toLowerCase()] === undefined)
        return `${where} answered ${res.status} without the documented ${name} header`;
    }

    const contentType = res.headers['content-type'];
    const content = response.content as Record<string, Json> | undefined;
    if (!contentType) {
      return content && method !== 'HEAD' && res.text
        ? `${where} answered ${res.status} with no Content-Type; the document gives a body`
        : null;
    }
    const mediaType = String(contentType).split(';')[0]!.trim().toLowerCase();
    if (!content?.[mediaType])
      return `${where} answered ${res.status} as ${mediaType}, which the document does not list`;
    if (mediaType !== 'application/json' || method === 'HEAD' || !content[mediaType]!.schema) return null;
    let body: unknown;
    try {
      body = JSON.parse(res.text);
    } catch {
      return `${where} answered ${res.status} with a body that is not JSON`;
    }
    const validate = this.validator([...responsePath, 'content', mediaType, 'schema']);
    if (validate(body)) return null;
    return `${where} answered ${res.status} with a body the document does not allow: ${this.ajv.errorsText(validate.errors)}\n${res.text.slice(0, 500)}`;
  }

  /**
   * A superagent plugin: after supertest's own expectations pass, the answer must match the
   * document, or the request fails with the reason.
   */
  plugin(): (test: request.Test) => void {
    return (request) => {
      const test = request as unknown as {
        assert: (err: unknown, res: Response | undefined, fn?: (err: unknown, res?: Response) => void) => void;
      };
      const assert = test.assert.bind(test);
      test.assert = (err, res, fn) =>
        assert(err, res, function (this: unknown, error: unknown, response?: Response) {
          const problem = !error && response ? checkerProblem(response) : null;
          fn?.call(this, error ?? (problem ? new Error(`OpenAPI: ${problem}`) : null), response);
        });
      const checkerProblem = (response: Response) => this.problem(request.method, request.url, response);
    };
  }
}

const checkers = new Map<string, ResponseChecker>();

/** One checker per document text: every test app of a run serves the same document. */
export function responseCheckerFor(docText: string): ResponseChecker {
  let checker = checkers.get(docText);
  if (!checker) {
    checker = new ResponseChecker(JSON.parse(docText) as Json);
    checkers.set(docText, checker);
  }
  return checker;
}
