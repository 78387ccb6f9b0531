// The OpenAPI 3.1 document of REST v1, generated from the route table and the GraphQL types
// behind it, so the documentation and the behaviour cannot drift apart.
import {
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  type GraphQLEnumType,
  type GraphQLInputField,
  type GraphQLInputObjectType,
  type GraphQLInputType,
  type GraphQLObjectType,
  type GraphQLOutputType,
} from 'graphql';
import { allScopes } from '../auth/scopes.js';
import { ERRORS, type ErrorCode } from '../errors.js';
// The schema (its fields' descriptions) first: its modules then load in their declared order,
// before the limits below are read from some of them.
import { schema } from '../schema/index.js';
import { MAX_BATCH } from '../schema/bulk.js';
import { MAX_EXTERNAL_ID, MAX_METADATA_KEY, MAX_METADATA_KEYS, MAX_METADATA_VALUE } from '../schema/integration-keys.js';
import { jsonSchemaOfRule, type FieldRule } from '../schema/field-rules.js';
import { MAX_SEARCH } from '../schema/list-query.js';
import { MAX_LIMIT, DEFAULT_LIMIT } from '../schema/pagination.js';
import { registeredResources } from '../schema/registry.js';
import { expandable } from './list-params.js';
import { snakeCase } from './names.js';
import type { Route } from './routes.js';

type JsonSchema = Record<string, unknown>;

const SCALARS: Record<string, JsonSchema> = {
  ID: { type: 'string', format: 'uuid' },
  String: { type: 'string' },
  Int: { type: 'integer' },
  Float: { type: 'number' },
  Boolean: { type: 'boolean' },
  DateTime: { type: 'string', format: 'date-time' },
  Date: { type: 'string', format: 'date' },
  JSON: { type: 'object' },
};

/** Event ids are not UUIDs. */
const EVENT_ID: JsonSchema = { type: 'string', pattern: '^evt_[0-9a-f]{32}$' };

function leafSchema(type: GraphQLOutputType | GraphQLInputType): JsonSchema {
  const named = getNamedType(type);
  if (isEnumType(named)) return { type: 'string', enum: named.getValues().map((v) => v.name) };
  return { ...(SCALARS[named.name] ?? { type: 'string' }) };
}

function nullable(schema: JsonSchema): JsonSchema {
  return { ...schema, type: [schema.type, 'null'] };
}

/** Integration keys' `metadata`: string values under short keys. */
const METADATA_KEYS = { pattern: `^[A-Za-z0-9_-]{1,${MAX_METADATA_KEY}}$` };
const metadataSchema = (values: JsonSchema): JsonSchema => ({ type: 'object', propertyNames: METADATA_KEYS, additionalProperties: values, maxProperties: MAX_METADATA_KEYS });
const METADATA_VALUE: JsonSchema = { type: 'string', maxLength: MAX_METADATA_VALUE };

/** A JSON field's schema: metadata's shape where the field is one, else any object. */
function jsonSchema(field: { name: string }, update = false): JsonSchema | undefined {
  if (field.name !== 'metadata') return undefined;
  // An update merges key by key: null removes a key.
  return metadataSchema(update ? { ...METADATA_VALUE, type: ['string', 'null'] } : METADATA_VALUE);
}

/**
 * A record as REST answers it: every field required. `expandable` references (`customer`)
 * are optional properties: present only when `expand=` names them. Embedded records that are
 * a resource's own (`records`: a duplicate group's customers) refer to its schema.
 */
function recordSchema(type: GraphQLObjectType, embedded: string[] = [], expandable: string[] = [], records: ReadonlySet<string> = new Set()): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const expanded: Record<string, JsonSchema> = {};
  for (const field of Object.values(type.getFields())) {
    const inner = getNullableType(field.type);
    const named = getNamedType(field.type);
    let schema: JsonSchema;
    if (expandable.includes(field.name)) {
      const ref = { $ref: `#/components/schemas/${named.name}` };
      expanded[snakeCase(field.name)] = {
        ...(isNonNullType(field.type) ? ref : { anyOf: [ref, { type: 'null' }] }),
        description: `With \`expand=${snakeCase(field.name)}\` only: the referenced record, beside its id.`,
      };
      continue;
    }
    if (isListType(inner) && isObjectType(named) && embedded.includes(field.name)) {
      schema = { type: 'array', items: records.has(named.name) ? { $ref: `#/components/schemas/${named.name}` } : recordSchema(named) };
    } else if (isListType(inner) && !isObjectType(named)) {
      schema = { type: 'array', items: leafSchema(inner.ofType) };
    } else if (isObjectType(named) || isListType(inner)) {
      continue;
    } else if (named.name === 'JSON' && jsonSchema(field)) {
      schema = jsonSchema(field)!;
    } else {
      schema = type.name === 'Event' && field.name === 'id' ? { ...EVENT_ID } : leafSchema(field.type);
    }
    if (field.description) schema.description = field.description;
    properties[snakeCase(field.name)] = isNonNullType(field.type) ? schema : nullable(schema);
  }
  return { type: 'object', properties: { ...properties, ...expanded }, required: Object.keys(properties), additionalProperties: false };
}

function inputSchema(type: GraphQLInputObjectType): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const field of Object.values(type.getFields())) {
    const inner = getNullableType(field.type);
    const named = getNamedType(field.type);
    const schema: JsonSchema = isListType(inner)
      ? { type: 'array', items: isInputObjectType(named) ? inputSchema(named) : leafSchema(named) }
      : named.name === 'JSON'
        ? (jsonSchema(field, type.name.startsWith('Update')) ?? leafSchema(field.type))
        : leafSchema(field.type);
    if (field.description) schema.description = field.description;
    // The keywords of the rule the server checks the field by (schema/field-rules.ts).
    const rule = (field.extensions as { rule?: FieldRule }).rule;
    if (rule) Object.assign(schema, jsonSchemaOfRule(rule));
    // Optional fields take null as well as absence (null clears them).
    if (isNonNullType(field.type)) required.push(snakeCase(field.name));
    properties[snakeCase(field.name)] = isNonNullType(field.type) ? schema : nullable(schema);
  }
  return { type: 'object', properties, required, additionalProperties: false };
}

/** The errors every operation may answer, described from the one error table. */
const COMMON_ERRORS: ErrorCode[] = ['BAD_REQUEST', 'UNAUTHENTICATED', 'FORBIDDEN', 'RATE_LIMITED', 'INTERNAL', 'UNAVAILABLE'];

/** The response headers a client relies on, each described once. */
const HEADERS = {
  'X-Request-Id': { description: 'The request id (the client\'s own, if it sent a sane one); also in every problem document and log line.', schema: { type: 'string' } },
  'RateLimit-Limit': { description: 'Requests allowed per window for this API key.', schema: { type: 'integer', minimum: 1 } },
  'RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Reset': { description: 'Seconds until the window has room again.', schema: { type: 'integer', minimum: 0 } },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } },
  Location: { description: 'Path of the new record.', schema: { type: 'string' } },
  'Idempotent-Replayed': { description: 'Present (`true`) when this is the stored answer to an earlier request with the same Idempotency-Key.', schema: { type: 'string', enum: ['true'] } },
  'WWW-Authenticate': { description: 'The authentication scheme: `Bearer`.', schema: { type: 'string' } },
  ETag: { description: 'The record\'s version, quoted (`"3"`): send it as `If-Match` to change the record only if nobody else has, or as `If-None-Match` to get a 304 while it is unchanged.', schema: { type: 'string', pattern: '^"[0-9]+"$' } },
  'Dry-Run': { description: 'Present (`true`) on the answer to `Prefer: dry-run`: what the real call would answer, with nothing kept.', schema: { type: 'string', enum: ['true'] } },
  'Preference-Applied': { description: '`dry-run` on the answer to `Prefer: dry-run` (RFC 7240).', schema: { type: 'string', enum: ['dry-run'] } },
} as const;

type HeaderName = keyof typeof HEADERS;
const RATE: HeaderName[] = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];

/**
 * The headers each status carries besides X-Request-Id (on every response): `always`, or
 * only `sometimes`. Every response to a counted API key says where the key stands; refusals
 * that can come before the key is counted (a bad Host, a failing database) may not.
 */
const ANSWER_HEADERS: Record<number, { always?: HeaderName[]; sometimes?: HeaderName[] }> = {
  200: { always: RATE },
  // Versioned records also carry their ETag (see `record` below).
  201: { always: [...RATE, 'Location'], sometimes: ['Idempotent-Replayed'] },
  // Accepted to run in the background (an import): where to follow it.
  202: { always: [...RATE, 'Location'] },
  204: { always: RATE, sometimes: ['Idempotent-Replayed'] },
  304: { always: [...RATE, 'ETag'] },
  400: { sometimes: RATE },
  401: { always: ['WWW-Authenticate'] },
  403: { always: RATE },
  404: { always: RATE },
  // Retry-After only while the first request with the Idempotency-Key is still running.
  409: { always: RATE, sometimes: ['Retry-After'] },
  // ETag of the current record, when the key may read it (the problem's `current`).
  412: { always: RATE, sometimes: ['ETag'] },
  413: { always: RATE },
  415: { always: RATE },
  429: { always: [...RATE, 'Retry-After'] },
  500: { sometimes: RATE },
  503: { always: ['Retry-After'], sometimes: RATE },
};

/**
 * A status's headers. Required ones refer to components.headers (where every header is
 * required); optional ones are written out, since a reference cannot unset `required`.
 */
function answerHeaders(status: number, extra: { always?: HeaderName[]; sometimes?: HeaderName[] } = {}) {
  const always = [...(ANSWER_HEADERS[status]?.always ?? []), ...(extra.always ?? [])];
  const sometimes = [...(ANSWER_HEADERS[status]?.sometimes ?? []), ...(extra.sometimes ?? [])];
  return Object.fromEntries([
    ...['X-Request-Id' as const, ...always].map((name) => [name, { $ref: `#/components/headers/${name}` }]),
    ...sometimes.map((name) => [name, HEADERS[name]]),
  ]);
}

/** Headers that some status always carries, shared in components.headers. */
const SHARED_HEADERS = Object.fromEntries(
  (Object.keys(HEADERS) as HeaderName[])
    .filter((name) => name === 'X-Request-Id' || name === 'ETag' || Object.values(ANSWER_HEADERS).some(({ always }) => always?.includes(name)))
    .map((name) => [name, { ...HEADERS[name], required: true }]),
);

function problemRef(description: string, status: number) {
  return {
    description,
    headers: answerHeaders(status),
    content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
  };
}

const an = (word: string) => (/^[aeiou]/i.test(word) ? `an ${word}` : `a ${word}`);

const IN_FLIGHT =
  'A request with the same Idempotency-Key is still running: retry after `Retry-After` seconds to get its answer. Without `Retry-After`, that first request never finished and whether it took effect is unknown: look for its record before sending it again with a new key.';

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: 'Retrying with the same key and body returns the first response and changes nothing again.',
  schema: { type: 'string', maxLength: 255 },
};

const PREFER = {
  name: 'Prefer',
  in: 'header',
  required: false,
  description:
    '`dry-run`: the write runs its real code path (checks, business rules, 409 and 412, the next number) in a transaction that is rolled back, and answers the status, headers and body the real call would, with `Dry-Run: true`. Nothing is kept: no record, number, event, webhook delivery or Idempotency-Key. A write that cannot be undone (a webhook endpoint\'s test delivery) refuses it: 400 naming `prefer`. Other preferences are ignored.',
  schema: { type: 'string', examples: ['dry-run'] },
};

const IF_MATCH = {
  name: 'If-Match',
  in: 'header',
  required: false,
  description: 'Change the record only if it is still at this version (its ETag, such as `"3"`); otherwise 412 with the current record. `*`: any version.',
  schema: { type: 'string' },
};

const IF_NONE_MATCH = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description: 'The ETag you hold: while the record is still at that version the answer is 304 with no body.',
  schema: { type: 'string' },
};

/** A deleted record in a sync (`include_deleted=true`). */
const TOMBSTONE = {
  type: 'object',
  description: 'A deleted record, as a sync shows it: remove it from your copy.',
  required: ['id', 'deleted', 'deleted_at', 'version'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    deleted: { type: 'boolean', enum: [true] },
    deleted_at: { type: 'string', format: 'date-time' },
    version: { type: 'integer' },
  },
  additionalProperties: false,
};

function paramSchema(p: Route['params'][number]): JsonSchema {
  if (p.name === 'page') return { type: 'integer', minimum: 1, default: 1 };
  if (p.name === 'limit') return { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT };
  if (p.kind === 'enum') return { type: 'string', enum: ['all', ...p.values!], default: 'all' };
  if (p.kind === 'id') return { type: 'string', format: 'uuid' };
  if (p.name === 'search') return { type: 'string', maxLength: MAX_SEARCH };
  if (p.name === 'updated_since') return { type: 'string', format: 'date-time' };
  if (p.name === 'include_deleted') return { type: 'boolean', default: false };
  return { type: 'string' };
}

/**
 * What a `<Type>Where` field is in REST: a set, a range, a relation, the search, keys with
 * exact values (JSON: `metadata[key]=value`) or an exact value.
 */
type FilterKind = 'search' | 'set' | 'range' | 'relation' | 'keys' | 'exact';

function filterKind(field: GraphQLInputField): FilterKind {
  const type = getNamedType(field.type);
  if (field.name === 'search') return 'search';
  if (type.name === 'JSON') return 'keys';
  if (isInputObjectType(type)) {
    const fields = type.getFields();
    if (fields.search) return 'relation';
    if (fields.in) return 'set';
    if (fields.gt) return 'range';
  }
  return 'exact';
}

/** A value of the field's kind, for the examples in descriptions. */
const EXAMPLES: Record<string, string> = { Date: '2026-12-01', DateTime: '2026-12-01T00:00:00Z', Int: '10000', ID: '<id>' };

function rangeScalar(field: GraphQLInputField): string {
  return getNamedType((getNamedType(field.type) as GraphQLInputObjectType).getFields().gt!.type).name;
}

/** The JSON schema of one filter's value (a relation's: its filters' values, one level deep). */
function filterSchema(field: GraphQLInputField): JsonSchema {
  const type = getNamedType(field.type);
  switch (filterKind(field)) {
    case 'search':
      return { type: 'string', maxLength: MAX_SEARCH };
    case 'set': {
      const values = getNamedType((type as GraphQLInputObjectType).getFields().in!.type) as GraphQLEnumType;
      return { type: 'array', items: leafSchema(values), minItems: 1, uniqueItems: true };
    }
    case 'range': {
      const bound = (type as GraphQLInputObjectType).getFields();
      const properties = Object.fromEntries(Object.values(bound).map((op) => [op.name, { ...leafSchema(op.type), description: op.description ?? undefined }]));
      return { type: 'object', properties, minProperties: 1, additionalProperties: false };
    }
    case 'relation': {
      const inner = Object.values((type as GraphQLInputObjectType).getFields());
      return { type: 'object', properties: Object.fromEntries(inner.map((f) => [snakeCase(f.name), filterSchema(f)])), minProperties: 1, additionalProperties: false };
    }
    case 'keys':
      return { type: 'object', additionalProperties: { type: 'string' }, minProperties: 1 };
    default:
      return leafSchema(field.type);
  }
}

/** How a filter is written in a query string, for its description: `status=sent,paid`, `due_date[lt]=...`. */
function filterUsage(field: GraphQLInputField, prefix = ''): string {
  const name = prefix ? `${prefix}[${snakeCase(field.name)}]` : snakeCase(field.name);
  const type = getNamedType(field.type) as GraphQLInputObjectType;
  switch (filterKind(field)) {
    case 'set': {
      const values = (getNamedType(type.getFields().in!.type) as GraphQLEnumType).getValues().map((v) => v.name);
      return `\`${name}=${values.slice(0, 2).join(',')}\``;
    }
    case 'range': {
      const example = EXAMPLES[rangeScalar(field)] ?? '...';
      return `\`${name}[gte]=${example}\``;
    }
    case 'search':
      return `\`${name}=acme\``;
    case 'keys':
      return `\`${name}[key]=value\``;
    default:
      return `\`${name}=${EXAMPLES[getNamedType(field.type).name] ?? '...'}\``;
  }
}

/**
 * A list's filters as query parameters, from its `<Type>Where`: sets comma-separated (form,
 * not exploded), ranges and relations as deepObject (`due_date[lt]=`, `customer[search]=`).
 * A relation's own ranges nest one more level (`invoices[due_date][lt]=`), which OpenAPI leaves
 * undefined for deepObject: the description spells the form out.
 */
function filterParams(where: GraphQLInputObjectType, resourceOf: (type: string) => { path: string; scope: string } | undefined) {
  return Object.values(where.getFields()).map((field) => {
    const name = snakeCase(field.name);
    const kind = filterKind(field);
    const schema = filterSchema(field);
    let description: string;
    let style: Record<string, unknown> = {};
    if (kind === 'set') {
      description = `Any of these values, comma-separated: ${filterUsage(field)}. \`${name}=all\`, like leaving it out, is no filter.`;
      style = { style: 'form', explode: false };
    } else if (kind === 'range') {
      const example = EXAMPLES[rangeScalar(field)]!;
      description = `A range, each bound given narrowing it (gt, gte, lt, lte): \`${name}[gte]=${example}&${name}[lt]=...\`. \`${name}=${example}\`, without an operator, matches exactly that value. A record without a value matches none.`;
      style = { style: 'deepObject', explode: true };
    } else if (kind === 'keys') {
      description = `${field.description ?? 'Each key given with exactly that value.'} In a query: ${filterUsage(field)}, a parameter per key.`;
      style = { style: 'deepObject', explode: true };
    } else if (kind === 'relation') {
      const related = getNamedType(field.type) as GraphQLInputObjectType;
      const inner = Object.values(related.getFields());
      const examples = [inner.find((f) => filterKind(f) === 'set'), inner.find((f) => filterKind(f) === 'range'), inner.find((f) => filterKind(f) === 'search')]
        .filter((f): f is GraphQLInputField => !!f)
        .map((f) => filterUsage(f, name));
      const resource = resourceOf(related.name.replace(/RelatedWhere$/, ''));
      const scope = resource ? ` Needs the scope \`${resource.scope}\` (403 otherwise).` : '';
      description = `${field.description ?? ''} Any filter of ${resource ? `\`GET /${resource.path}\`` : 'that list'} inside \`${name}[...]\`, one level deep: ${examples.join(', ')} (a range's operator in a second bracket).${scope}`.trim();
      style = { style: 'deepObject', explode: true };
    } else {
      description = field.description ?? 'Exactly this value.';
    }
    return { name, in: 'query', required: false, description, ...style, schema };
  });
}

/** `order_by`: the list's sort keys, from its `<Type>OrderBy` (`DUE_DATE_ASC` is `due_date`, `DUE_DATE_DESC` `-due_date`). */
function orderByParam(orderBy: GraphQLEnumType) {
  const keys = orderBy.getValues().map((v) => (v.name.endsWith('_DESC') ? `-${v.name.slice(0, -5).toLowerCase()}` : v.name.replace(/_ASC$/, '').toLowerCase()));
  return {
    name: 'order_by',
    in: 'query',
    required: false,
    description:
      'Sort keys, comma-separated, the first deciding most: `order_by=due_date,-total_amount` (`-` sorts descending). Default `-created_at`. Nulls sort last either way, enumerations in their declared order, and `id` breaks ties in the last key\'s direction. Not with `include_deleted` (a sync is in change order); a `cursor` carries the sort and the filters.',
    style: 'form',
    explode: false,
    schema: { type: 'array', items: { type: 'string', enum: keys }, minItems: 1, uniqueItems: true },
  };
}

/** `fields` and `expand`: the shape of the record answered (lists and items). */
function shapeParams(route: Route, fields: string[]) {
  const references = expandable(route).map(snakeCase);
  return [
    {
      name: 'fields',
      in: 'query',
      required: false,
      description: `Only these fields of each record (and \`id\`, always), comma-separated: \`fields=${fields.filter((f) => f !== 'id').slice(0, 2).join(',')}\`. The record's other properties are then left out.`,
      style: 'form',
      explode: false,
      schema: { type: 'array', items: { type: 'string', enum: fields }, minItems: 1, uniqueItems: true },
    },
    ...(references.length > 0
      ? [
          {
            name: 'expand',
            in: 'query',
            required: false,
            description: `References to answer as the whole record beside its id (\`${references[0]}\` beside \`${references[0]}_id\`), comma-separated: \`expand=${references.join(',')}\` (\`expand[]=${references[0]}\`, repeated, also works). One level; each needs its resource's read scope (403 naming it).`,
            style: 'form',
            explode: false,
            schema: { type: 'array', items: { type: 'string', enum: references }, minItems: 1, uniqueItems: true },
          },
        ]
      : []),
  ];
}

/** The path as documented: an upsert's address names its external id. */
function documentPath(route: Route): string {
  return route.kind === 'upsert' ? route.path.replace('{id}', '{external_id}') : route.path;
}

/** A GraphQL field's description: a move's or a view's words for what it does. */
function descriptionOf(field: string): string | undefined {
  return (schema.getMutationType()?.getFields()[field] ?? schema.getQueryType()?.getFields()[field])?.description ?? undefined;
}

/** Its first clause, as a summary: `Moves an invoice from draft to sent`. */
const clause = (text: string) => text.split(/[.:;] /)[0]!.replace(/\.$/, '');

/**
 * A write's operation: it takes `Prefer: dry-run`, and each answer after the key is admitted
 * may be a dry run's (401 and 429 come first); a success may be a replay of its Idempotency-Key.
 */
function asWrite(operation: Record<string, unknown>): Record<string, unknown> {
  const responses = Object.entries(operation.responses as Record<string, { headers?: Record<string, unknown> }>).map(([status, response]) => {
    if (status === '401' || status === '429') return [status, response];
    const replayed = status.startsWith('2') && !response.headers?.['Idempotent-Replayed'] ? { 'Idempotent-Replayed': HEADERS['Idempotent-Replayed'] } : {};
    return [status, { ...response, headers: { ...response.headers, ...replayed, 'Dry-Run': HEADERS['Dry-Run'], 'Preference-Applied': HEADERS['Preference-Applied'] } }];
  });
  return { ...operation, parameters: [...(operation.parameters as object[]), PREFER], responses: Object.fromEntries(responses) };
}

/** A refused item of a batch, in its result. */
const BATCH_ITEM_ERROR: JsonSchema = {
  type: 'object',
  description: 'Why the item was refused (nothing of it was written): what its single call would answer.',
  required: ['code', 'detail', 'errors'],
  properties: {
    code: { type: 'string', enum: Object.keys(ERRORS) },
    detail: { type: 'string' },
    errors: {
      type: 'array',
      description: 'Its faults, named as in the item (`email` for `data.email`, `external_id`).',
      items: { type: 'object', required: ['param', 'message'], properties: { param: { type: 'string' }, message: { type: 'string' } }, additionalProperties: false },
    },
  },
  additionalProperties: false,
};

/**
 * A batch's body: `items`, each one op with what it takes (`data` the create input, or the
 * update input for an update: a resource without updates has no update op), and `mode`.
 */
function batchRequestSchema(route: Route, inputRef: (input: GraphQLInputObjectType) => JsonSchema): JsonSchema {
  const { create, update } = route.inputs ?? {};
  if (!create) throw new Error(`${route.field} has no create input`);
  const externalId = (description: string) => ({ type: 'string', minLength: 1, maxLength: MAX_EXTERNAL_ID, description });
  const ifMatch = { type: 'integer', description: 'Only if the record is still at this version (its `version`); otherwise the item fails with 412.' };
  const item = (op: string, title: string, description: string, required: string[], properties: Record<string, unknown>) => ({
    title,
    description,
    type: 'object',
    required: ['op', ...required],
    properties: { op: { type: 'string', enum: [op] }, ...properties },
    additionalProperties: false,
  });
  // An update or a delete names its record by id, or by external id: one variant each.
  const targeted = (op: string, description: string, properties: Record<string, unknown>) => [
    item(op, op, description, ['id'], { id: { type: 'string', format: 'uuid', description: 'The record.' }, if_match: ifMatch, ...properties }),
    item(op, `${op} by external id`, description, ['external_id'], { external_id: externalId('The live record holding this external id.'), if_match: ifMatch, ...properties }),
  ];
  const path = `/${route.resource.path}`;
  const variants = [
    item('create', 'create', `Creates a record, as \`POST ${path}\` does.`, ['data'], { external_id: externalId('The new record\'s external id.'), data: inputRef(create) }),
    ...(update ? targeted('update', `Changes a record, as \`PATCH ${path}/{id}\` does (metadata merges key by key).`, { data: inputRef(update) }) : []),
    item('upsert', 'upsert', `Creates the record holding the external id or updates it, as \`PUT ${path}/by_external_id/{external_id}\` does.`, ['external_id', 'data'], {
      external_id: externalId('The record\'s external id.'),
      data: inputRef(create),
    }),
    ...targeted('delete', `Deletes a record, as \`DELETE ${path}/{id}\` does.`, {}),
  ];
  return {
    type: 'object',
    required: ['items'],
    properties: {
      items: { type: 'array', minItems: 1, maxItems: MAX_BATCH, items: { oneOf: variants } },
      // No `default` keyword: generators would make the field required in a body.
      mode: { type: 'string', enum: ['atomic', 'partial'], description: '`atomic` (when left out): every item or none, a refused item fails the call. `partial`: each item on its own, answered in its result.' },
    },
    additionalProperties: false,
  };
}

/** A batch's answer: a result per item, in order, with the record written or the item's error. */
function batchResponseSchema(type: string): JsonSchema {
  return {
    type: 'object',
    required: ['results'],
    properties: {
      results: {
        type: 'array',
        items: {
          type: 'object',
          required: ['index', 'status'],
          properties: {
            index: { type: 'integer', minimum: 0, description: 'The item\'s position in `items`, from 0.' },
            status: { type: 'integer', description: 'What its single call would answer: 201 created, 200 updated, 204 deleted, or its error\'s status.' },
            record: { $ref: `#/components/schemas/${type}`, description: 'The record as written (not after a delete or a refusal).' },
            error: { $ref: '#/components/schemas/BatchItemError' },
          },
          additionalProperties: false,
        },
      },
    },
    additionalProperties: false,
  };
}

/**
 * The document's order of paths, whatever order the schema declared them in: by collection,
 * shorter first, and a parameter before a word at the same place (`/jobs/{id}` before
 * `/jobs/sync`, `/jobs/{id}/start` before `/jobs/by_external_id/{external_id}`).
 */
function comparePaths(a: string, b: string): number {
  const [x, y] = [a.split('/'), b.split('/')];
  if (x[1] !== y[1]) return x[1]! < y[1]! ? -1 : 1;
  if (x.length !== y.length) return x.length - y.length;
  for (let i = 2; i < x.length; i++) {
    if (x[i] === y[i]) continue;
    const [px, py] = [x[i]!.startsWith('{'), y[i]!.startsWith('{')];
    if (px !== py) return px ? -1 : 1;
    return x[i]! < y[i]! ? -1 : 1;
  }
  return 0;
}

export function openApiDocument(routes: Route[]) {
  const schemas: Record<string, JsonSchema> = {
    Problem: {
      type: 'object',
      description: 'RFC 9457 problem details.',
      required: ['type', 'title', 'status', 'detail', 'code', 'request_id'],
      properties: {
        type: { type: 'string' },
        title: { type: 'string' },
        status: { type: 'integer' },
        detail: { type: 'string' },
        code: { type: 'string', enum: Object.keys(ERRORS) },
        request_id: { type: 'string' },
        errors: {
          type: 'array',
          items: { type: 'object', required: ['param', 'message'], properties: { param: { type: 'string' }, message: { type: 'string' } } },
        },
      },
    },
    Pagination: {
      type: 'object',
      required: ['page', 'limit', 'total', 'next_cursor', 'has_more'],
      properties: {
        page: { type: 'integer', minimum: 1 },
        limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT },
        total: { type: 'integer', minimum: 0 },
        next_cursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page. In change order (a sync) never null: on the last page, where to resume later.' },
        has_more: { type: 'boolean', description: 'Whether more records follow this page now.' },
      },
    },
  };
  const paths: Record<string, Record<string, unknown>> = {};
  /** A resource's list path and read scope (what a relation filter or an expand needs), by type. */
  const resourceOf = (type: string) => {
    const item = routes.find((r) => r.resource.type === type && r.kind === 'item');
    return item && { path: item.resource.path, scope: item.scope };
  };
  /** What `fields=` may name: the record's properties, references left out. */
  const fieldsOf = (name: string) => {
    const { properties, required } = schemas[name] as { properties: Record<string, unknown>; required: string[] };
    return Object.keys(properties).filter((p) => required.includes(p));
  };
  /** The types of resources' records: a page of groups refers to them. */
  const records = new Set(routes.filter((r) => r.kind === 'item').map((r) => r.resource.type));
  for (const route of routes) {
    const name = route.resource.type;
    schemas[name] ??= recordSchema(route.record, route.resource.embedded, expandable(route), records);
    const ref = { $ref: `#/components/schemas/${name}` };
    const errors = Object.fromEntries(COMMON_ERRORS.map((code) => [ERRORS[code].status, problemRef(ERRORS[code].description, ERRORS[code].status)]));
    // `webhook_endpoints` is a webhook endpoint.
    const one = route.resource.path.replace(/s$/, '').replace(/_/g, ' ');
    const idParam =
      route.resource.path === 'events'
        ? { name: 'id', in: 'path', required: true, description: 'The event\'s id (evt_ and 32 hexadecimal digits); any other value is a 404.', schema: EVENT_ID }
        : { name: 'id', in: 'path', required: true, description: `The ${one}'s id (a UUID); any other value is a 404.`, schema: { type: 'string', format: 'uuid' } };
    // Records with a version answer with their ETag and take If-Match / If-None-Match.
    const versioned = 'version' in route.record.getFields();
    const tag: { always?: HeaderName[] } = versioned ? { always: ['ETag'] } : {};
    const record = (description: string, status = 200) => ({ description, headers: answerHeaders(status, tag), content: { 'application/json': { schema: ref } } });
    const inputRef = (input: GraphQLInputObjectType) => {
      schemas[input.name] ??= inputSchema(input);
      return { $ref: `#/components/schemas/${input.name}` };
    };
    const bodyErrors = { 413: problemRef(ERRORS.PAYLOAD_TOO_LARGE.description, 413), 415: problemRef(ERRORS.UNSUPPORTED_MEDIA_TYPE.description, 415) };
    // A list that syncs is documented without `include_deleted` (which it still takes), so
    // its page holds records only; its sync (GET /{path}/sync) holds records or tombstones.
    const syncs = route.kind === 'sync';
    if (syncs) schemas.Tombstone ??= TOMBSTONE;
    let operation: Record<string, unknown>;
    if (route.kind === 'list' || route.kind === 'sync' || route.kind === 'related' || route.kind === 'view') {
      const told = route.kind === 'view' ? descriptionOf(route.field) : undefined;
      const listed = route.record.description ?? `List ${route.resource.path}`;
      const hasSync = routes.some((r) => r.kind === 'sync' && r.resource.path === route.resource.path);
      const summaries = {
        list: hasSync ? `List ${route.resource.path}, newest first (or in change order from \`updated_since\`)` : listed,
        sync: `Sync ${route.resource.path}: every change in change order, deleted ones as tombstones`,
        related: listed,
        view: told ? clause(told) : route.field,
      };
      const descriptions = {
        list: hasSync
          ? `${listed}. Deleted ones are not listed: to mirror ${route.resource.path}, follow \`GET /v1/${route.resource.path}/sync\` and its cursors there, whose rows are records or tombstones (this list's \`include_deleted=true\`, the contract's spelling, or a sync's cursor sent here, answers the same rows, tombstones included).`
          : undefined,
        sync: `The list in change order, oldest change first, with deleted ${route.resource.path} as tombstones (the list's \`include_deleted=true\`). \`next_cursor\` is never null: on the last page it is where to resume later, and a reader that follows it never misses a committed change.`,
        related: undefined,
        view: told ? [told, route.record.description].filter(Boolean).join(' ') : undefined,
      };
      const documented = route.params.filter((p) => route.kind !== 'list' || p.name !== 'include_deleted' || !hasSync);
      operation = {
        operationId: route.kind === 'list' ? `list${name}s` : route.kind === 'sync' ? `sync${name}s` : route.field,
        summary: summaries[route.kind],
        ...(descriptions[route.kind] ? { description: descriptions[route.kind] } : {}),
        // A view pages but takes no filters, sort or shape (rest/list-params.ts reads none).
        parameters: [
          ...(route.kind === 'related' ? [idParam] : []),
          ...documented.map((p) => ({ name: p.name, in: 'query', required: false, description: p.description, schema: paramSchema(p) })),
          ...(route.orderBy ? [orderByParam(route.orderBy)] : []),
          ...(route.where ? filterParams(route.where, resourceOf) : []),
          ...(route.kind === 'list' || route.kind === 'sync' ? shapeParams(route, fieldsOf(name)) : []),
        ],
        responses: {
          200: {
            description: syncs ? `A page of ${route.resource.path}: records as they are now, deleted ones as tombstones.` : 'A page.',
            headers: answerHeaders(200),
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['data', 'pagination'],
                  properties: { data: { type: 'array', items: syncs ? { anyOf: [ref, { $ref: '#/components/schemas/Tombstone' }] } : ref }, pagination: { $ref: '#/components/schemas/Pagination' } },
                },
              },
            },
          },
          ...(route.kind === 'related' ? { 404: problemRef(ERRORS.NOT_FOUND.description, 404) } : {}),
          ...errors,
        },
      };
    } else if (route.kind === 'item') {
      operation = {
        operationId: `get${name}`,
        summary: `Get one ${one}`,
        parameters: [idParam, ...(versioned ? [IF_NONE_MATCH] : []), ...shapeParams(route, fieldsOf(name))],
        responses: {
          200: record(`The ${one}.`),
          ...(versioned ? { 304: { description: 'Not modified: the record is still at the version `If-None-Match` names.', headers: answerHeaders(304) } } : {}),
          404: problemRef(ERRORS.NOT_FOUND.description, 404),
          ...errors,
        },
      };
    } else if (route.kind === 'create') {
      operation = {
        operationId: `create${name}`,
        summary: `Create ${an(one)}`,
        parameters: [IDEMPOTENCY_KEY],
        requestBody: { required: true, content: { 'application/json': { schema: inputRef(route.input!) } } },
        responses: {
          201: record(`The created ${one}.`, 201),
          409: problemRef(IN_FLIGHT, 409),
          ...bodyErrors,
          ...errors,
        },
      };
    } else if (route.kind === 'upsert') {
      operation = {
        operationId: route.field,
        summary: `Create or update ${an(one)} by its external id`,
        description: `Creates ${an(one)} holding the external id, or updates the live ${one} that holds it with the body's fields that an update takes (what only a create sets, such as a customer reference, stays). Concurrent calls for one external id make one record.`,
        parameters: [
          {
            name: 'external_id',
            in: 'path',
            required: true,
            description: `The integration's own id of the ${one}, percent-encoded (\`hub%2F7\` is \`hub/7\`).`,
            schema: { type: 'string', minLength: 1, maxLength: MAX_EXTERNAL_ID },
          },
          IDEMPOTENCY_KEY,
        ],
        requestBody: { required: true, content: { 'application/json': { schema: inputRef(route.input!) } } },
        responses: {
          200: record(`Updated: the live ${one} that holds the external id.`),
          201: record(`Created, holding the external id (at version 1).`, 201),
          409: problemRef(`Refused because of the record's state (its status), named in \`detail\`; or: ${IN_FLIGHT}`, 409),
          ...bodyErrors,
          ...errors,
        },
      };
    } else if (route.kind === 'batch') {
      schemas[`${name}BatchRequest`] ??= batchRequestSchema(route, inputRef);
      schemas[`${name}BatchResponse`] ??= batchResponseSchema(name);
      schemas.BatchItemError ??= BATCH_ITEM_ERROR;
      const atomic = (status: number, what: string) => problemRef(`Atomic: ${what}; nothing was written. \`errors\` names every item's fault as \`items[i].<field>\` (\`items[i]\` for the item as a whole).`, status);
      operation = {
        operationId: route.field,
        summary: `${route.inputs?.update ? 'Create, update, upsert' : 'Create, upsert'} and delete up to ${MAX_BATCH} ${route.resource.path} at once`,
        description: `In one transaction, each item as its single call would do it (with its own event). \`atomic\` (the default): all or nothing; \`partial\`: each item on its own, a refused one answered in its result. An Idempotency-Key covers the whole call.`,
        parameters: [IDEMPOTENCY_KEY],
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}BatchRequest` } } } },
        responses: {
          200: {
            description: 'Every item\'s result, in order: all written (atomic), or each written or refused on its own (partial).',
            headers: answerHeaders(200),
            content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}BatchResponse` } } },
          },
          400: atomic(400, `an item's fields are invalid (or the body itself is, in either mode: then \`errors\` names \`items\`, \`mode\` or \`items[i].op\`)`),
          404: atomic(404, 'an item names no record of this organization'),
          409: problemRef(`Atomic: an item was refused because of its record's state, or its external id belongs to another record (\`items[i].external_id\`); nothing was written. Or: ${IN_FLIGHT}`, 409),
          412: atomic(412, 'an item\'s record is no longer at its `if_match` version'),
          ...bodyErrors,
          ...errors,
        },
      };
    } else if (route.kind === 'import') {
      // A file to write in the background: its body is the CSV itself, its answer where to follow it.
      const told = descriptionOf(route.field);
      const job = route.record.getFields();
      operation = {
        operationId: route.field,
        summary: told ? clause(told) : route.field,
        ...(told ? { description: told } : {}),
        parameters: [
          ...route.params.map((p) => ({ name: p.name, in: 'query', required: false, description: p.description, schema: p.values ? { type: 'string', enum: p.values } : paramSchema(p) })),
          IDEMPOTENCY_KEY,
        ],
        requestBody: { required: true, content: { 'text/csv': { schema: { type: 'string' } } } },
        responses: {
          202: {
            description: `Accepted: it runs in the background; \`Location\` is where to follow it (\`GET /${route.resource.path}/{id}\`).`,
            headers: answerHeaders(202),
            content: {
              'application/json': {
                schema: { type: 'object', required: ['id', 'status'], properties: { id: leafSchema(job.id!.type), status: leafSchema(job.status!.type) }, additionalProperties: false },
              },
            },
          },
          409: problemRef(IN_FLIGHT, 409),
          ...bodyErrors,
          ...errors,
        },
      };
    } else {
      const summaries: Record<string, string> = {
        update: `Change ${an(one)}'s fields (JSON merge patch)`,
        delete: versioned ? `Delete ${an(one)} (it can be restored)` : `Delete ${an(one)}`,
        restore: `Restore a deleted ${one}`,
      };
      const body: Record<string, unknown> = {};
      if (route.input) {
        const schema = inputRef(route.input);
        // A move's body is needed when its input has a required field (a merge's source_ids).
        const needed = Object.values(route.input.getFields()).some((field) => isNonNullType(field.type));
        body.requestBody = route.kind === 'update'
          ? { required: true, content: { 'application/merge-patch+json': { schema }, 'application/json': { schema } } }
          : { required: needed, content: { 'application/json': { schema } } };
      }
      const told = descriptionOf(route.field);
      operation = {
        operationId: route.field,
        summary: summaries[route.kind] ?? (told ? clause(told) : route.field),
        ...(!summaries[route.kind] && told && told !== `${clause(told)}.` ? { description: told } : {}),
        parameters: versioned ? [idParam, IF_MATCH, IDEMPOTENCY_KEY] : [idParam, IDEMPOTENCY_KEY],
        ...body,
        responses: {
          ...(route.kind === 'delete'
            ? { 204: { description: versioned ? `Deleted. Gone from lists, totals and relations; \`POST /${route.resource.path}/{id}/restore\` brings it back.` : 'Deleted.', headers: answerHeaders(204, tag) } }
            : { 200: record(`The ${one}.`) }),
          404: problemRef(ERRORS.NOT_FOUND.description, 404),
          409: problemRef(`Refused because of the record's state (its status, records that refer to it, or not deleted), named in \`detail\`; or: ${IN_FLIGHT}`, 409),
          ...(versioned
            ? {
                412: {
                  description: `${ERRORS.PRECONDITION_FAILED.description} The problem's \`current\` member is the record as it is now (when the key may read it).`,
                  headers: answerHeaders(412),
                  content: { 'application/problem+json': { schema: { allOf: [{ $ref: '#/components/schemas/Problem' }, { type: 'object', properties: { current: ref } }] } } },
                },
              }
            : {}),
          ...(route.input ? bodyErrors : {}),
          ...errors,
        },
      };
    }
    if (route.method !== 'GET') operation = asWrite(operation);
    operation.security = [{ apiKey: [] }];
    operation.tags = [route.resource.path];
    operation.description = `${operation.description ? `${operation.description as string} ` : ''}Requires the scope \`${route.scope}\`.`;
    (paths[documentPath(route)] ??= {})[route.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'CRM API',
      version: '1.0.0',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      description: `The records of the organization an API key belongs to (${registeredResources().map((resource) => resource.path).join(', ')}), its events and webhooks. Scopes: ${allScopes().join(', ')}.`,
    },
    servers: [{ url: '/v1' }],
    security: [{ apiKey: [] }],
    tags: [...new Set(routes.map((r) => r.resource.path))].sort().map((name) => ({ name, description: `The ${name} of the API key's organization.` })),
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => comparePaths(a, b))),
    components: {
      schemas,
      headers: SHARED_HEADERS,
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'An API key: `Authorization: Bearer svc_live_...`.' } },
    },
  };
}
