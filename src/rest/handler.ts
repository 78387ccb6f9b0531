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
import type { QueryParam, Route } from './routes.js';
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
  if (!/^application\/([\w.+-]+\+)?json\s*(;|$)/i.test(type)) {
    throw apiError('UNSUPPORTED_MEDIA_TYPE', 'The body must be JSON: send Content-Type: application/json.');
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
  return { variables: { input: value }, inputErrors: errors };
}

/** A GraphQL error in REST's words: snake_case fields, the route's scope, no type names. */
function inRestWords(error: GraphQLError, route: Route): GraphQLError {
  const code = codeOf(error);
  const errors = (error.extensions?.errors as FieldError[] | undefined)?.map((e) => ({ param: restParam(e.param), message: e.message }));
  let detail = error.message;
  if (errors?.length) detail = `Invalid fields: ${errors.map((e) => e.param).join(', ')}.`;
  else if (code === 'FORBIDDEN') detail = `This API key lacks the scope ${route.scope}.`;
  return apiError(code, detail, { errors, headers: errorHeaders(error) });
}

export async function handleRest(route: Route, request: Request, url: URL, base: string, id: string | undefined, execute: Execute, requestId: string): Promise<Response> {
  let response: Response;
  try {
    // Items and creates take no query parameters: the same check refuses any that come.
    const queried = queryVariables(url, route.params);
    const { variables, inputErrors } =
      route.kind === 'create' ? await bodyVariables(request, route) : { variables: route.kind === 'list' ? queried : { id }, inputErrors: undefined };
    const result = await execute(route, variables, inputErrors);
    const error = result.errors?.[0];
    const data = result.data?.result;
    if (error) {
      response = problemResponse(inRestWords(error, route), requestId);
    } else if (data === null || data === undefined) {
      response = problemResponse(apiError('NOT_FOUND', `No ${route.resource.type.toLowerCase()} with this id in this organization.`), requestId);
    } else if (route.kind === 'create') {
      const created = data as { id: string };
      response = Response.json(data, { status: 201, headers: { location: `${base}/${route.resource.path}/${created.id}` } });
    } else {
      response = Response.json(data);
    }
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error;
    response = problemResponse(error, requestId);
  }
  return response;
}
