// What the bench's parts share: a server under test, a row of the results table, the
// GraphQL documents measured both over HTTP (run.ts) and in process (cpu.ts), and the raw
// create the one-statement reference serves and raw-inserts.ts sends straight.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';

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
  /** The machine's CPU time over the measured window per request, ms (bench/run.ts busyCpuMs). */
  cpuMsPerRequest?: number;
}

/** The GraphQL list: the REST list's page in GraphQL's words. */
export const LIST_QUERY = '{ customers(limit: 20) { data { id name email phone createdAt updatedAt } pagination { page limit total } } }';
/** 20 customers with their newest jobs and invoices, and the invoices' lines. */
export const NESTED_QUERY = '{ customers(limit: 20) { data { name jobs(limit: 5) { title status } invoices(limit: 5) { number totalAmount lineItems { amount } } } } }';

/** The body of a customer's create, the same for the service and every reference. */
export const CREATE_BODY = JSON.stringify({ name: 'Bench Customer', email: 'bench@example.com' });

/** The raw create of a customer ($1 id, $2 organization, $3 name, $4 e-mail), through every trigger of customers. */
export const CUSTOMER_INSERT = 'INSERT INTO customers (id, organization_id, name, email, updated_at) VALUES ($1, $2, $3, $4, now())';

/** A UUID v7 (time-ordered), as the service's Prisma client makes record ids. */
export function uuid7(): string {
  const random = randomUUID();
  const time = Date.now().toString(16).padStart(12, '0');
  return `${time.slice(0, 8)}-${time.slice(8)}-7${random.slice(15, 18)}-${random.slice(19)}`;
}
