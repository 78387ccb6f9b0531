// The one generic REST handler: finds the route row, turns the query string or JSON body
// into GraphQL variables, runs the row's operation through the GraphQL pipeline (the same
// auth, scopes, validation and limits as /graphql), and turns the result into a REST body
// or a problem document.
import { GraphQLError, type ExecutionResult } from 'graphql';
import { apiError, codeOf, errorHeaders, type FieldError } from '../errors.js';
import { problemResponse } from '../http/problem.js';
import { readBody } from '../http/read-body.js';
import { csvBody } from '../imports/body.js';
import { bodyToInput } from './body.js';
import { restQuery, type Shape } from './list-params.js';
import { restParam, snakeCase } from './names.js';
import { CHANGES, shapedRoute, type Route } from './routes.js';
import { Response } from '../http/fetch.js';

/** Runs a route's operation on the GraphQL pipeline. */
export type Execute = (route: Route, variables: Record<string, unknown>, inputErrors?: FieldError[]) => Promise<ExecutionResult<{ result: unknown } | null>>;

function badRequest(detail: string, errors: FieldError[]): GraphQLError {
  return apiError('BAD_REQUEST', detail, { errors });
}

interface BodyVariables {
  variables: Record<string, unknown>;
  /** Unknown and mistyped fields, left for the operation to report with its own faults. */
  inputErrors: FieldError[];
  /** The faults name the body's own keys, as sent (not GraphQL paths to put in REST words). */
  asSent?: boolean;
}

/** The JSON body of a write (415 for another type, 400 for text that is not JSON). */
async function jsonBody(request: Request, route: Route): Promise<unknown> {
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
  return body;
}

async function bodyVariables(request: Request, route: Route): Promise<BodyVariables> {
  const body = await jsonBody(request, route);
  const { value, errors } = bodyToInput(body, route.input!);
  if (!value) throw badRequest('The body must be a JSON object.', errors);
  // A status changes only through its transitions, which record what goes with it.
  const moves = route.moves?.length ? route.moves : undefined;
  const pointed = errors.map((e) => (moves && e.param === 'status' ? { param: 'status', message: `is changed by the transitions: POST ${route.path.replace('{id}', ':id')}/${moves.join(' | ')}` } : e));
  return { variables: { input: value }, inputErrors: pointed };
}

/**
 * The faults of a body sent to an operation that takes none (a transition without input, a
 * restore): ignoring it would let `{"paid_at": ...}` look accepted while the move records its
 * own time. No body, an empty one, `{}`, `[]` or `null` (what clients send for "nothing") is
 * no body.
 */
async function unwantedBody(request: Request): Promise<FieldError[]> {
  const text = (await readBody(request)).trim();
  if (text === '') return [];
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (body === null || (Array.isArray(body) && body.length === 0)) return [];
  if (typeof body !== 'object' || Array.isArray(body)) return [{ param: 'body', message: 'must be empty: this operation takes no body' }];
  return Object.keys(body).map((param) => ({ param, message: 'is not a known field: this operation takes no body' }));
}

const BATCH_ITEM_FIELDS: Record<string, string> = { op: 'op', id: 'id', external_id: 'externalId', data: 'data', if_match: 'ifMatch' };
const BATCH_OPS = ['create', 'update', 'upsert', 'delete'];

/**
 * A batch body `{ items: [{ op, id?, external_id?, data?, if_match? }], mode? }` as variables:
 * each item's `data` in the input type of its op, snake_case to the input's fields. A malformed
 * body is answered with every fault at once, by the operation (so a key without the scope
 * hears 403 first): it gets no items and the faults. Faults in an item's data are the item's
 * own (named `items[i].field`), so a partial batch answers them in that item's result.
 */
function batchVariables(route: Route, body: unknown): BodyVariables {
  const errors: FieldError[] = [];
  const inputErrors: FieldError[] = [];
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { variables: { items: [] }, inputErrors: [{ param: 'body', message: 'must be an object: { "items": [...], "mode": "atomic" | "partial" }' }] };
  }
  const { items, mode, ...unknown } = body as Record<string, unknown>;
  for (const name of Object.keys(unknown)) errors.push({ param: name, message: 'is not a known field (items, mode)' });
  if (mode !== undefined && mode !== 'atomic' && mode !== 'partial') errors.push({ param: 'mode', message: 'must be atomic or partial' });
  if (!Array.isArray(items)) errors.push({ param: 'items', message: 'must be an array of 1 to 100 items' });
  const translated = (Array.isArray(items) ? items : []).map((item, index) => {
    const at = `items[${index}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      errors.push({ param: at, message: 'must be an object: { op, id?, external_id?, data?, if_match? }' });
      return undefined;
    }
    const renamed: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(item as Record<string, unknown>)) {
      if (!Object.hasOwn(BATCH_ITEM_FIELDS, key)) errors.push({ param: `${at}.${key}`, message: 'is not a known field (op, id, external_id, data, if_match)' });
      else renamed[BATCH_ITEM_FIELDS[key]!] = value;
    }
    if (!BATCH_OPS.includes(renamed.op as string)) errors.push({ param: `${at}.op`, message: `must be one of ${BATCH_OPS.join(', ')}` });
    if (renamed.ifMatch !== undefined && (typeof renamed.ifMatch !== 'number' || !Number.isInteger(renamed.ifMatch) || renamed.ifMatch < 1 || renamed.ifMatch > 2_147_483_647)) errors.push({ param: `${at}.if_match`, message: 'must be a version number' });
    for (const key of ['id', 'externalId'] as const) if (renamed[key] !== undefined && renamed[key] !== null && typeof renamed[key] !== 'string') errors.push({ param: `${at}.${snakeCase(key)}`, message: 'must be a string' });
    const input = renamed.op === 'update' ? route.inputs?.update : renamed.op === 'delete' ? undefined : route.inputs?.create;
    if (input && renamed.data !== undefined) {
      const data = bodyToInput(renamed.data, input);
      if (data.value) renamed.data = data.value;
      inputErrors.push(...data.errors.map((e) => ({ param: `${at}.${e.param === 'body' ? 'data' : e.param}`, message: e.message })));
    }
    return renamed;
  });
  if (errors.length > 0) return { variables: { items: [] }, inputErrors: errors, asSent: true };
  return { variables: { items: translated, ...(mode ? { mode } : {}) }, inputErrors };
}

interface BatchAnswer {
  results: Array<{ index: number; status: number; record: unknown; error: { code: string; message: string; errors: FieldError[] } | null }>;
}

/** A batch's results in REST's words: `{ index, status, record? , error? }`. */
function batchResults({ results }: BatchAnswer) {
  return {
    results: results.map(({ index, status, record, error }) => ({
      index,
      status,
      ...(record ? { record } : {}),
      ...(error ? { error: { code: error.code, detail: error.message, errors: error.errors.map((e) => ({ param: restParam(e.param), message: e.message })) } } : {}),
    })),
  };
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

/**
 * A GraphQL error in REST's words: snake_case fields (query parameters as sent), the scope
 * missing (the route's, or the one an expand or a relation filter needs), no type names.
 */
function inRestWords(error: GraphQLError, route: Route, sent: Map<string, string>): GraphQLError {
  const code = codeOf(error);
  const errors = (error.extensions?.errors as FieldError[] | undefined)?.map((e) => ({ param: sent.get(e.param) ?? restParam(e.param), message: e.message }));
  let detail = error.message;
  if (errors?.length && code === 'BAD_REQUEST') detail = `Invalid ${sent.size > 0 || route.method === 'GET' ? 'parameters' : 'fields'}: ${errors.map((e) => e.param).join(', ')}.`;
  else if (code === 'FORBIDDEN') detail = `This API key lacks the scope ${(error.extensions?.scopes as string[] | undefined)?.join(' or ') ?? route.scope}.`;
  return apiError(code, detail, { errors, headers: errorHeaders(error) });
}

/** A deleted record in a sync: just enough for a mirror to remove it. */
function tombstone(record: Record<string, unknown>) {
  return record.deleted_at ? { id: record.id, deleted: true, deleted_at: record.deleted_at, version: record.version } : record;
}

/** With `fields=`, only the fields asked (and `id`, and what `expand` asked); tombstones stay whole. */
function sparseRecord(shape: Shape): (record: Record<string, unknown>) => Record<string, unknown> {
  if (!shape.fields) return (record) => record;
  const keep = new Set(['id', ...shape.fields, ...(shape.expand ?? []).map(snakeCase)]);
  return (record) => (record.deleted === true ? record : Object.fromEntries(Object.entries(record).filter(([name]) => keep.has(name))));
}

/** A versioned record's ETag (records without a version, such as webhook endpoints, have none). */
function etagOf(record: unknown): string | undefined {
  const { version } = record as { version?: unknown };
  return typeof version === 'number' ? `"${version}"` : undefined;
}

export async function handleRest(route: Route, request: Request, url: URL, base: string, id: string | undefined, execute: Execute, requestId: string): Promise<Response> {
  try {
    // Lists take paging, order and filters; lists and items the record's shape; the same
    // check refuses any parameter elsewhere.
    const query = restQuery(url, route);
    const shaped = shapedRoute(route, query.shape);
    // An upsert's address names the record by its external id.
    let variables: Record<string, unknown> =
      route.kind === 'list' ? query.variables : route.kind === 'sync' ? { ...query.variables, includeDeleted: true } : route.kind === 'upsert' ? { externalId: id } : { ...query.variables, id };
    let inputErrors: FieldError[] | undefined;
    if (CHANGES.has(route.kind)) variables.expectedVersion = expectedVersion(request);
    if (route.kind === 'batch') {
      const body = batchVariables(route, await jsonBody(request, route));
      variables = body.variables;
      inputErrors = body.inputErrors;
      if (body.asSent) for (const error of body.inputErrors) query.sent.set(error.param, error.param);
    }
    // An import's body is the CSV file itself, its own size cap (src/imports/body.ts).
    if (route.kind === 'import') variables = { ...query.variables, csv: await csvBody(request) };
    if (route.kind === 'create' || route.kind === 'update' || route.kind === 'upsert' || (route.kind === 'move' && route.input && request.headers.has('content-type'))) {
      const body = await bodyVariables(request, route);
      variables = { ...variables, ...body.variables };
      inputErrors = body.inputErrors;
    } else if ((route.kind === 'move' && !route.input) || route.kind === 'restore') {
      inputErrors = await unwantedBody(request);
      for (const error of inputErrors) query.sent.set(error.param, error.param);
    }
    const result = await execute(shaped, variables, inputErrors);
    const error = result.errors?.[0];
    const data = result.data?.result;
    if (error) {
      const refusal = inRestWords(error, route, query.sent);
      // A failed condition answers the record as it is now, so the client can merge and retry.
      const current = codeOf(refusal) === 'PRECONDITION_FAILED' && route.item && id !== undefined ? (await execute(route.item, { id })).data?.result : undefined;
      const etag = current ? etagOf(current) : undefined;
      return problemResponse(refusal, requestId, current ? { current } : undefined, etag ? { etag } : undefined);
    }
    if (data === null || data === undefined) {
      // A related list (a record's events) is missing when its record is.
      const type = (route.item ?? route).resource.type;
      return problemResponse(apiError('NOT_FOUND', `No ${type.toLowerCase()} with this id in this organization.`), requestId);
    }
    const sparse = sparseRecord(query.shape);
    if (route.kind === 'list' || route.kind === 'sync' || route.kind === 'related') {
      const page = data as { data: Array<Record<string, unknown>> };
      return Response.json({ ...page, data: page.data.map(tombstone).map(sparse) });
    }
    const etag = etagOf(data);
    const headers: Record<string, string> = etag ? { etag } : {};
    if (route.kind === 'delete') return new Response(null, { status: 204, headers });
    if (route.kind === 'item' && etag && unchanged(request, etag)) return new Response(null, { status: 304, headers });
    if (route.kind === 'item') return Response.json(sparse(data as Record<string, unknown>), { headers });
    if (route.kind === 'batch') return Response.json(batchResults(data as BatchAnswer));
    // An import is accepted and runs in the background: 202, and where to follow it.
    if (route.kind === 'import') return Response.json(data, { status: 202, headers: { location: `${base}/${route.resource.path}/${(data as { id: string }).id}` } });
    // An upsert that created answers like a create (a new record is at version 1).
    if (route.kind === 'create' || (route.kind === 'upsert' && (data as { version?: number }).version === 1)) {
      const location = `${base}/${route.resource.path}/${(data as { id: string }).id}`;
      return Response.json(data, { status: 201, headers: { location, ...headers } });
    }
    return Response.json(data, { headers });
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error;
    return problemResponse(error, requestId);
  }
}
