// The peer: PostGraphile serving the same database. PostGraphile 5 needs Node 22
// (Promise.withResolvers); on this Node 20 machine the peer is PostGraphile 4.14.
import { createServer } from 'node:http';
import { postgraphile } from 'postgraphile';

const middleware = postgraphile(process.env.DATABASE_URL, 'public', {
  disableQueryLog: true,
  retryOnInitFail: false,
  graphqlRoute: '/graphql',
});
const server = createServer(middleware);
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => console.log(JSON.stringify({ msg: 'listening', port: server.address().port })));
process.on('SIGTERM', () => process.exit(0));
