// What the bench's parts share: a server under test, a row of the results table, and the
// GraphQL documents measured both over HTTP (run.ts) and in process (cpu.ts).
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

/** The GraphQL list: the REST list's page in GraphQL's words. */
export const LIST_QUERY = '{ customers(limit: 20) { data { id name email phone createdAt updatedAt } pagination { page limit total } } }';
/** 20 customers with their newest jobs and invoices, and the invoices' lines. */
export const NESTED_QUERY = '{ customers(limit: 20) { data { name jobs(limit: 5) { title status } invoices(limit: 5) { number totalAmount lineItems { amount } } } } }';
