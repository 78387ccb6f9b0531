// The one generic REST handler: finds the route row, turns the query string or JSON body
// into GraphQL variables, runs the row's operation through the GraphQL pipeline (the same
// auth, scopes, validation and limits as /graphql), and turns the result into a REST body
// or a problem document.
import { GraphQLError, type ExecutionResult } from 'graphql';
import { apiError, codeOf, errorHeaders, type FieldError } from '../errors.js';
import { problemResponse } from '../http/problem.js';
import { readBody } from '../http/read-body.js';
import { bodyToInput, queryValue } from './body.js';
import { restParam } from './names.js';
import { CHANGES, type QueryParam, type Route } from './routes.js';
import { Response } from '../http/fetch.js';

/** Runs a route's operation on the GraphQL pipeline. */
export type Execute = (route: Route, variables: Record<string, unknown>, inputErrors?: FieldError[]) => Promise<ExecutionResult<{ result: unknown } | null>>;

function badRequest(detail: string, errors: FieldError[]): GraphQLError {
  return apiError('BAD_REQUEST', detail, { errors });
}

function queryVariables(url: URL, params: QueryParam[]): Record<string, unknown> {
  const known = new Map(params.map((p) => [p.name, p]));
  const errors: FieldError[] = [];
  const variables: Record<string, unknown> = {};
  const seen = new Set<string>();
  for (const [name, raw] of url.searchParams) {
    const param = known.get(name);
    if (!param) {
      const known = params.length > 0 ? ` (known: ${params.map((p) => p.name).join(', ')})` : '';
      errors.push({ param: name, message: `is not a parameter of this endpoint${known}` });
      continue;
    }
    if (seen.has(name)) {
      errors.push({ param: name, message: 'must not be repeated' });
      continue;
    }
    seen.add(name);
    // REST's own rule: `all` is no filter. Everything else is the argument type's to judge.
    if (param.kind === 'enum' && raw === 'all') continue;
    const { value, fault } = queryValue(raw, param.type);
    if (fault) errors.push({ param: name, message: param.kind === 'enum' ? fault.replace('must be one of ', 'must be one of all, ') : fault });
    else variables[param.variable] = value;
  }
  if (errors.length > 0) throw badRequest(`Invalid query parameters: ${errors.map((e) => e.param).join(', ')}.`, errors);
  return variables;
}

interface BodyVariables {
  variables: Record<string, unknown>;
  /** Unknown and mistyped fields, left for the operation to report with its own faults. */
  inputErrors: FieldError[];
}

async function bodyVariables(request: Request, route: Route): Promise<BodyVariables> {
  const type = request.headers.get('content-type') ?? '';
  // JSON, and for PATCH its merge-patch form (application/merge-patch+json, RFC 7396).
  if (!/^application\/([\w.+-]+\+)?json\s*(;|$)/i.test(type)) {
    throw apiError('UNSUPPORTED_MEDIA_TYPE', `The body must be JSON: send Content-Type: ${route.kind === 'update' ? 'application/merge-patch+json or ' : ''}application/json.`);
  }
  const text = await readBody(request);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw badRequest('The body is not valid JSON.', [{ param: 'body', message: 'is not valid JSON' }]);
  }
  const { value, errors } = bodyToInput(body, route.input!);
  if (!value) throw badRequest('The body must be a JSON object.', errors);
  // A status changes only through its transitions, which record what goes with it.
  const moves = route.moves?.length ? route.moves : undefined;
  const pointed = errors.map((e) => (moves && e.param === 'status' ? { param: 'status', message: `is changed by the transitions: POST ${route.path.replace('{id}', ':id')}/${moves.join(' | ')}` } : e));
  return { variables: { input: value }, inputErrors: pointed };
}

/** `If-Match: "3"`: the version a change is conditional on (`*`: any). */
function expectedVersion(request: Request): number | undefined {
  const header = request.headers.get('if-match');
  if (header === null || header.trim() === '*') return undefined;
  const version = /^\s*"(\d{1,9})"\s*$/.exec(header)?.[1];
  if (version === undefined) throw badRequest('Invalid If-Match header.', [{ param: 'If-Match', message: 'must be a version as its ETag gives it, such as "3"' }]);
  return Number(version);
}

/** Whether `If-None-Match` names the record's current ETag (a GET then answers 304). */
function unchanged(request: Request, etag: string): boolean {
  const header = request.headers.get('if-none-match');
  if (header === null) return false;
  return header.trim() === '*' || header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/** A GraphQL error in REST's words: snake_case fields, the route's scope, no type names. */
function inRestWords(error: GraphQLError, route: Route): GraphQLError {
  const code = codeOf(error);
  const errors = (error.extensions?.errors as FieldError[] | undefined)?.map((e) => ({ param: restParam(e.param), message: e.message }));
  let detail = error.message;
  if (errors?.length && code === 'BAD_REQUEST') detail = `Invalid fields: ${errors.map((e) => e.param).join(', ')}.`;
  else if (code === 'FORBIDDEN') detail = `This API key lacks the scope ${route.scope}.`;
  return apiError(code, detail, { errors, headers: errorHeaders(error) });
}

/** A deleted record in a sync: just enough for a mirror to remove it. */
function tombstone(record: Record<string, unknown>) {
  return record.deleted_at ? { id: record.id, deleted: true, deleted_at: record.deleted_at, version: record.version } : record;
}

/** A versioned record's ETag (records without a version, such as webhook endpoints, have none). */
function etagOf(record: unknown): string | undefined {
  const { version } = record as { version?: unknown };
  return typeof version === 'number' ? `"${version}"` : undefined;
}

export async function handleRest(route: Route, request: Request, url: URL, base: string, id: string | undefined, execute: Execute, requestId: string): Promise<Response> {
  try {
    // Only lists take query parameters: the same check refuses any that come elsewhere.
    const queried = queryVariables(url, route.params);
    let variables: Record<string, unknown> = route.kind === 'list' ? queried : { ...queried, id };
    let inputErrors: FieldError[] | undefined;
    if (CHANGES.has(route.kind)) variables.expectedVersion = expectedVersion(request);
    if (route.kind === 'create' || route.kind === 'update' || (route.kind === 'move' && route.input && request.headers.has('content-type'))) {
      const body = await bodyVariables(request, route);
      variables = { ...variables, ...body.variables };
      inputErrors = body.inputErrors;
    }
    const result = await execute(route, variables, inputErrors);
    const error = result.errors?.[0];
    const data = result.data?.result;
    if (error) {
      const refusal = inRestWords(error, route);
      // A failed condition answers the record as it is now, so the client can merge and retry.
      const current = codeOf(refusal) === 'PRECONDITION_FAILED' && route.item ? (await execute(route.item, { id })).data?.result : undefined;
      const etag = current ? etagOf(current) : undefined;
      return problemResponse(refusal, requestId, current ? { current } : undefined, etag ? { etag } : undefined);
    }
    if (data === null || data === undefined) {
      return problemResponse(apiError('NOT_FOUND', `No ${route.resource.type.toLowerCase()} with this id in this organization.`), requestId);
    }
    if (route.kind === 'list' || route.kind === 'related') {
      const page = data as { data: Array<Record<string, unknown>> };
      return Response.json({ ...page, data: page.data.map(tombstone) });
    }
    const etag = etagOf(data);
    const headers: Record<string, string> = etag ? { etag } : {};
    if (route.kind === 'delete') return new Response(null, { status: 204, headers });
    if (route.kind === 'item' && etag && unchanged(request, etag)) return new Response(null, { status: 304, headers });
    if (route.kind === 'create') {
      const location = `${base}/${route.resource.path}/${(data as { id: string }).id}`;
      return Response.json(data, { status: 201, headers: { location, ...headers } });
    }
    return Response.json(data, { headers });
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error;
    return problemResponse(error, requestId);
  }
}
