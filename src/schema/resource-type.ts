// The models a resource can be made of: a module of its own, so that what changes.ts imports
// (references, the registry) can name the type without importing changes.ts back.
import type PrismaTypes from '../generated/pothos-prisma-types.js';

/**
 * Read from the generated Prisma types: the models that are versioned and deleted softly
 * (`version`, `deletedAt`). A new model with both is one without any edit here.
 */
export type ResourceType = {
  [Model in keyof PrismaTypes]: PrismaTypes[Model]['Shape'] extends { version: number; deletedAt: Date | null } ? Model : never;
}[keyof PrismaTypes];
