import { describe, expect, it } from 'vitest';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { parse } from 'graphql';
import { declaresRecursiveInput, expandedFieldCount, MAX_COMPILED_FIELDS, selectsNestedRelations, useCompiledExecution } from '../../src/graphql/compiled-execution.js';
import { schema as crmSchema } from '../../src/schema/index.js';
import { createLogger } from '../../src/logger.js';

describe('compiled execution', () => {
  it('compiles a document once it repeats, with the same answers, errors included', async () => {
    const schema = createSchema({
      typeDefs: 'type Query { hello(name: String!): String!  broken: String }',
      resolvers: { Query: { hello: (_: unknown, { name }: { name: string }) => `hello ${name}`, broken: () => { throw new Error('nope'); } } },
    });
    const compiled: boolean[] = [];
    // graphql-jit marks the results it produced with their own serializer.
    const observe: Plugin = { onExecute: () => ({ onExecuteDone: ({ result }) => void compiled.push('stringify' in (result as object)) }) };
    const yoga = createYoga({ schema, plugins: [useCompiledExecution(createLogger('silent')), observe], maskedErrors: false });
    const bodies = [];
    for (let i = 0; i < 5; i++) {
      const response = await yoga.fetch('http://x/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'query Q($n: String!) { hello(name: $n) broken }', variables: { n: `#${i}` } }),
      });
      bodies.push(await response.json());
    }
    expect(compiled).toEqual([false, false, false, true, true]);
    for (const [i, body] of bodies.entries()) {
      expect(body.data).toEqual({ hello: `hello #${i}`, broken: null });
      expect(body.errors).toMatchObject([{ message: 'nope', path: ['broken'] }]);
    }
  });

  it('leaves to the standard executor a document with a relation beneath a relation, however it is written', () => {
    const nested = (query: string) => selectsNestedRelations(crmSchema, parse(query));
    expect(nested('{ customers { data { name jobs { title } invoices { number } } } }')).toBe(false);
    expect(nested('{ invoices { data { number lineItems { amount } customer { name } } } }')).toBe(false);
    expect(nested('{ customers { data { invoices { lineItems { amount } } } } }')).toBe(true);
    expect(nested('{ jobs { data { customer { invoices { number } } } } }')).toBe(true);
    expect(nested('{ customers { data { invoices { ...Lines } } } } fragment Lines on Invoice { lineItems { amount } }')).toBe(true);
    expect(nested('{ customers { data { invoices { ... on Invoice { job { title } } } } } }')).toBe(true);
    expect(nested('{ customers { data { ...Deep } } } fragment Deep on Customer { jobs { customer { name } } }')).toBe(true);
  });

  it('measures a document by its fields with every fragment written out, without writing them out', () => {
    const size = (query: string) => expandedFieldCount(parse(query));
    expect(size('{ customers { data { name email } } }')).toBe(4);
    expect(size('{ customers { data { ...C ...C } } } fragment C on Customer { name email }')).toBe(6);
    expect(size('{ customers { data { ... on Customer { name } } } }')).toBe(3);
    // Each level spreads the next twice: 2^40 fields, counted in a blink and capped just past the bound.
    const levels = Array.from({ length: 40 }, (_, i) => `fragment F${i} on Customer { name ...F${i + 1} ...F${i + 1} }`).join(' ');
    expect(size(`{ customers { data { ...F0 } } } ${levels} fragment F40 on Customer { email }`)).toBe(MAX_COMPILED_FIELDS + 1);
  });

  it('never compiles a document whose variables have a recursive input type (graphql-jit would never finish writing it)', async () => {
    const schema = createSchema({
      typeDefs: 'input Where { name: String, parent: Where } type Query { count(where: Where): Int! }',
      resolvers: { Query: { count: () => 1 } },
    });
    const recursive = parse('query Q($w: Where) { count(where: $w) }');
    expect(declaresRecursiveInput(schema, recursive)).toBe(true);
    expect(declaresRecursiveInput(schema, parse('{ count }'))).toBe(false);
    const yoga = createYoga({ schema, plugins: [useCompiledExecution(createLogger('silent'))] });
    // Past the runs after which a document is compiled: each still answers (compiling it ran out of memory).
    for (let i = 0; i < 6; i++) {
      const response = await yoga.fetch('http://x/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'query Q($w: Where) { count(where: $w) }', variables: { w: { name: 'a', parent: { name: 'b' } } } }),
      });
      expect(await response.json()).toEqual({ data: { count: 1 } });
    }
  });

  it("declares no recursive input type in the service's own schema (relation filters take <Type>RelatedWhere)", () => {
    const lists = Object.values(crmSchema.getQueryType()!.getFields()).filter((field) => field.args.some((arg) => arg.name === 'where'));
    expect(lists.length).toBeGreaterThanOrEqual(6);
    for (const field of lists) {
      const document = parse(`query Q($where: ${String(field.args.find((arg) => arg.name === 'where')!.type)}) { ${field.name}(where: $where) { pagination { total } } }`);
      expect(declaresRecursiveInput(crmSchema, document), field.name).toBe(false);
    }
  });
});
