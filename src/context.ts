import type { PrismaClient } from './generated/prisma/client.js';
import type { Logger } from './logger.js';

/** What every GraphQL resolver (and so every REST route) receives. */
export interface Context {
  requestId: string;
  prisma: PrismaClient;
  log: Logger;
}
