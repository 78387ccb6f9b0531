// What the bench's parts share: a server under test and a row of the results table.
import type { ChildProcess } from 'node:child_process';

export interface Server {
  name: string;
  url: string;
  process: ChildProcess;
}

export interface Row {
  scenario: string;
  system: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  rssMb: number;
}
