// The test helpers clean up after themselves: a server that does not start in time is
// killed, with whatever it started, rather than left running after its test failed.
import { expect, it } from 'vitest';
import { startServer } from '../helpers/processes.js';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

it('a server start that times out kills the process and its children', async () => {
  // A "server" that never listens, with a child of its own.
  const script = `const c = require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    console.log('child ' + c.pid); setInterval(() => {}, 1000);`;
  const failed = await startServer({}, ['-e', script], 1_500).catch((error: Error) => error);
  expect(failed).toBeInstanceOf(Error);
  const child = Number(/child (\d+)/.exec((failed as Error).message)![1]);
  await expect.poll(() => alive(child), { timeout: 5_000 }).toBe(false);
});
