import { describe, expect, it } from 'vitest';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { useCompiledExecution } from '../../src/graphql/compiled-execution.js';
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
});
